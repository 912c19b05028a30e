# Sandtray bash kernel: evaluates each request in this one shell, so the
# working directory, variables, functions and exports persist. Requests come
# on fd 62 as "<id> <length>\n<code>"; the end of each run goes to fd 63 as
# "<id> <exit status> <i if interrupted, else ->", and the shell stops
# itself until the next run. While user code runs, fds
# 62 and 63 are closed, so neither it nor what it starts can use them.
trap '__sandtray_interrupted=i' INT

__sandtray_read() {
	local LC_ALL=C # lengths count bytes
	IFS=' ' read -r __sandtray_id __sandtray_len <&62 || return 1
	__sandtray_code=
	if [ "$__sandtray_len" -gt 0 ]; then
		IFS= read -r -d '' -N "$__sandtray_len" __sandtray_code <&62 || [ -n "$__sandtray_code" ]
	fi
}

while __sandtray_read; do
	__sandtray_interrupted=-
	export SANDTRAY_EXEC=$__sandtray_id # marks what the run starts (see supervisor.py, sweep)
	eval "$__sandtray_code" 62<&- 63>&-
	__sandtray_status=$?
	printf '%s %s %s\n' "$__sandtray_id" "$__sandtray_status" "$__sandtray_interrupted" >&63
	kill -STOP $$ # the supervisor ends the run once it sees this shell stopped
done
