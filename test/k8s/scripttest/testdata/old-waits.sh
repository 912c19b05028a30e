# The two waits of up.sh as they were when the first real node came up
# (kept so that scripttest/scripts_test.go can show lib_test.sh catches them): node_ready
# greps compact JSON, and wait_for reads $2 after shift 3.
# shellcheck shell=bash
wait_for() {
	local name=$1 limit=$(($(now) + $2 * 1000)) what=$3
	shift 3
	until "$@" >/dev/null 2>&1; do
		if ! kill -0 "$(cat "$K8S_DIR/$name.pid")" 2>/dev/null || [ "$(now)" -gt "$limit" ]; then
			tail -n 30 "$K8S_DIR/logs/$name.log" >&2
			die "$what: not after $2s ($name's log: $K8S_DIR/logs/$name.log; make k8s-down cleans up)"
		fi
		sleep 0.1
	done
}
node_ready() { api "/api/v1/nodes/$K8S_NODE" | grep -q '"type":"Ready","status":"True"'; }
