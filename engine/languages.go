package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// language says how to run a snippet: the file it is saved as, the programs
// the image must have (the first found is used as $run), and the shell that
// runs it. Code arrives on stdin, so it never meets a shell's quoting.
type language struct {
	name     string
	aliases  []string
	file     string
	runtimes []string
	script   string // uses $run, $src and $dir
	// kernel: runs in a long-lived interpreter that keeps state between
	// calls (see kernel.go) rather than a fresh process per call.
	kernel bool
}

var languages = []language{
	{name: "python", aliases: []string{"py", "python3"}, file: "main.py", runtimes: []string{"python3", "python"}, script: `"$run" "$src"`, kernel: true},
	{name: "bash", file: "main.sh", runtimes: []string{"bash"}, script: `"$run" "$src"`, kernel: true},
	{name: "sh", aliases: []string{"shell"}, file: "main.sh", runtimes: []string{"sh"}, script: `"$run" "$src"`},
	{name: "javascript", aliases: []string{"js", "node", "nodejs"}, file: "main.js", runtimes: []string{"node", "nodejs"}, script: `"$run" "$src"`, kernel: true},
	{name: "c", file: "main.c", runtimes: []string{"gcc", "cc", "clang"}, script: `"$run" -O2 -o "$dir/main" "$src" -lm && "$dir/main"`},
	{name: "cpp", aliases: []string{"c++", "cxx"}, file: "main.cpp", runtimes: []string{"g++", "c++", "clang++"}, script: `"$run" -O2 -o "$dir/main" "$src" && "$dir/main"`},
	{name: "ruby", aliases: []string{"rb"}, file: "main.rb", runtimes: []string{"ruby"}, script: `"$run" "$src"`},
	{name: "perl", aliases: []string{"pl"}, file: "main.pl", runtimes: []string{"perl"}, script: `"$run" "$src"`},
}

// Languages lists the names execute_code accepts, for messages and schemas.
func Languages() []string {
	names := make([]string, len(languages))
	for i, l := range languages {
		names[i] = l.name
	}
	return names
}

// LanguageAliases maps the other spellings execute_code accepts (py, node,
// c++ …) to their language's name.
func LanguageAliases() map[string]string {
	aliases := map[string]string{}
	for _, l := range languages {
		for _, a := range l.aliases {
			aliases[a] = l.name
		}
	}
	return aliases
}

func languageFor(name string) (language, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" {
		n = "python"
	}
	for _, l := range languages {
		if l.name == n || slices.Contains(l.aliases, n) {
			return l, nil
		}
	}
	return language{}, fmt.Errorf("language %q is not supported; use one of %s, or execute_command to run any program the image has: %w",
		name, strings.Join(Languages(), ", "), sandbox.ErrInvalid)
}

// missingRuntime is the exit status the code script uses when the image has
// none of the language's runtimes; user code never runs in that case, so the
// status cannot be confused with the code's own.
const missingRuntime = 217

// codeScript saves stdin to a fresh file and runs it with the first runtime
// the image has.
func (l language) codeScript() string {
	return `run=; for r in ` + strings.Join(l.runtimes, " ") + `; do if command -v "$r" >/dev/null 2>&1; then run=$r; break; fi; done
if [ -z "$run" ]; then cat >/dev/null; exit ` + fmt.Sprint(missingRuntime) + `; fi
dir=$(mktemp -d /tmp/.sandtray-code.XXXXXX) || exit 1
src="$dir/` + l.file + `"
cat >"$src" || exit 1
` + l.script + `
rc=$?; rm -rf "$dir"; exit $rc`
}
