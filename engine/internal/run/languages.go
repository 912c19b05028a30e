package run

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Language is one language execute_code accepts, and how to run a snippet
// of it as a fresh process: the file it is saved as, the programs the image
// must have (the first found is used as $run), and the shell that runs it.
// Code arrives on stdin, so it never meets a shell's quoting.
type Language struct {
	Name string
	// Kernel: it runs in a long-lived interpreter that keeps state between
	// calls (engine/internal/kernel) rather than a fresh process per call.
	Kernel   bool
	aliases  []string
	file     string
	runtimes []string
	script   string // uses $run, $src and $dir
}

var languages = []Language{
	{Name: "python", aliases: []string{"py", "python3"}, file: "main.py", runtimes: []string{"python3", "python"}, script: `"$run" "$src"`, Kernel: true},
	{Name: "bash", file: "main.sh", runtimes: []string{"bash"}, script: `"$run" "$src"`, Kernel: true},
	{Name: "sh", aliases: []string{"shell"}, file: "main.sh", runtimes: []string{"sh"}, script: `"$run" "$src"`},
	{Name: "javascript", aliases: []string{"js", "node", "nodejs"}, file: "main.js", runtimes: []string{"node", "nodejs"}, script: `"$run" "$src"`, Kernel: true},
	{Name: "c", file: "main.c", runtimes: []string{"gcc", "cc", "clang"}, script: `"$run" -O2 -o "$dir/main" "$src" -lm && "$dir/main"`},
	{Name: "cpp", aliases: []string{"c++", "cxx"}, file: "main.cpp", runtimes: []string{"g++", "c++", "clang++"}, script: `"$run" -O2 -o "$dir/main" "$src" && "$dir/main"`},
	{Name: "ruby", aliases: []string{"rb"}, file: "main.rb", runtimes: []string{"ruby"}, script: `"$run" "$src"`},
	{Name: "perl", aliases: []string{"pl"}, file: "main.pl", runtimes: []string{"perl"}, script: `"$run" "$src"`},
}

// Languages lists the names execute_code accepts, for messages and schemas.
func Languages() []string {
	names := make([]string, len(languages))
	for i, l := range languages {
		names[i] = l.Name
	}
	return names
}

// LanguageAliases maps the other spellings execute_code accepts (py, node,
// c++ …) to their language's name.
func LanguageAliases() map[string]string {
	aliases := map[string]string{}
	for _, l := range languages {
		for _, a := range l.aliases {
			aliases[a] = l.Name
		}
	}
	return aliases
}

// LanguageFor returns the language name or one of its aliases spells
// (python when name is empty).
func LanguageFor(name string) (Language, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" {
		n = "python"
	}
	for _, l := range languages {
		if l.Name == n || slices.Contains(l.aliases, n) {
			return l, nil
		}
	}
	return Language{}, fmt.Errorf("language %q is not supported; use one of %s, or execute_command to run any program the image has: %w",
		name, strings.Join(Languages(), ", "), sandbox.ErrInvalid)
}

// missingRuntime is the exit status the code script uses when the image has
// none of the language's runtimes; user code never runs in that case, so the
// status cannot be confused with the code's own.
const missingRuntime = 217

// codeScript saves stdin to a fresh file and runs it with the first runtime
// the image has.
func (l Language) codeScript() string {
	return `run=; for r in ` + strings.Join(l.runtimes, " ") + `; do if command -v "$r" >/dev/null 2>&1; then run=$r; break; fi; done
if [ -z "$run" ]; then cat >/dev/null; exit ` + fmt.Sprint(missingRuntime) + `; fi
dir=$(mktemp -d /tmp/.sandtray-code.XXXXXX) || exit 1
src="$dir/` + l.file + `"
cat >"$src" || exit 1
` + l.script + `
rc=$?; rm -rf "$dir"; exit $rc`
}

// Script is the process that runs code as a fresh process: saved to a
// file, run by the first runtime the image has.
func (l Language) Script(code, workdir string, timeout time.Duration, out *Output) Process {
	return Process{Cmd: []string{"/bin/sh", "-c", l.codeScript()}, Workdir: workdir,
		Stdin: strings.NewReader(code), Timeout: timeout, Out: out}
}

// NoRuntime is the error for a Script's result when the image, named by
// image, had none of the language's runtimes; nil when it ran.
func (l Language) NoRuntime(res Result, image string) error {
	if res.Result.ExitCode != missingRuntime {
		return nil
	}
	return fmt.Errorf("image %s has no %s runtime (looked for %s); create a sandbox with an image that has it (create_sandbox image=...), or install it with execute_command: %w",
		image, l.Name, strings.Join(l.runtimes, ", "), sandbox.ErrUnsupported)
}
