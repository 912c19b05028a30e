package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Init is what the disk watch knows of a sandbox's PID 1 before it kills
// every other writer: processes inside cannot kill it, so the kill spares
// it, and that is safe only while it is an init of Sandtray's that runs
// nothing of the sandbox's.
type Init struct {
	// Ours: PID 1 is Docker's own init, or Sandtray's, in the run the
	// engine started it in. Otherwise (a container started again runs its
	// main command from its own files, which the sandbox may have changed)
	// PID 1 is one of the sandbox's processes, and the watch stops the
	// sandbox instead of sparing it.
	Ours bool
	// Main is the process spared as the sandbox's main one: MainOldest
	// (PID 1's oldest child, docker-init's main command, whose end would
	// stop the sandbox), a pid (a first kernel's interpreter, whose
	// supervisor is PID 1), or 0 for none.
	Main int
}

// MainOldest spares PID 1's oldest child (see Init.Main).
const MainOldest = -1

// killWriters kills, in a sandbox where no call runs, every process that
// can be writing but its pid 1 (an init of Sandtray's: see Init), its main
// process ($1: see Init.Main; "-1" finds PID 1's oldest child), the
// engine's own execs (a process whose parent is 0 in the sandbox's pid
// namespace: only Docker starts those, so no process can make itself one)
// and their children (a kernel's interpreter, stopped between runs, whose
// state the user keeps). What a process that hid from the sweep started is
// none of these: it was re-parented to pid 1, or is a grandchild of an
// exec. Like the sweep (exec.go), it uses only the shell's builtins, stops
// each round's finds before it kills them, and ends after two rounds in a
// row that killed nothing (at most twelve); it prints how many it killed.
const killWriters = `want=$1; n=0; e=0; for _ in 1 2 3 4 5 6 7 8 9 10 11 12; do roots=" "; main=; mt=; [ "$want" = -1 ] || main=$want; ` +
	`for d in /proc/[0-9]*; do q=${d#/proc/}; s=; read -r s 2>/dev/null <"$d/stat"; [ -n "$s" ] || continue; set -- ${s##*) }; ` +
	`if [ "$2" = 0 ] && [ "$q" != 1 ]; then roots="$roots$q "; fi; ` +
	`if [ "$want" = -1 ] && [ "$2" = 1 ] && { [ -z "$mt" ] || [ "${20}" -lt "$mt" ]; }; then mt=${20}; main=$q; fi; done; ` +
	`p=; for d in /proc/[0-9]*; do q=${d#/proc/}; [ "$q" != 1 ] && [ "$q" != $$ ] && [ "$q" != "$main" ] || continue; ` +
	`s=; read -r s 2>/dev/null <"$d/stat"; [ -n "$s" ] || continue; set -- ${s##*) }; [ "$1" != Z ] || continue; ` +
	`case $roots in *" $q "*|*" $2 "*) continue;; esac; p="$p $q"; done; ` +
	`k=0; if [ -n "$p" ]; then kill -STOP $p 2>/dev/null; for q in $p; do kill -KILL $q 2>/dev/null && k=$((k+1)); done; fi; ` +
	`n=$((n+k)); if [ $k -gt 0 ]; then e=0; continue; fi; e=$((e+1)); [ $e -lt 2 ] || break; ` +
	`i=0; while [ $i -lt 300 ]; do i=$((i+1)); done; done; echo "killed $n"`

// KillWriters kills the processes in t that may be writing while no call
// runs (see killWriters), but main (see Init.Main), as the sandbox's user
// and as root: without capabilities each may only signal its own uid's
// processes, and a process may have been left by an install, which runs as
// root. It returns how many it killed.
func (r *Runner) KillWriters(ctx context.Context, t sandbox.Handle, main int) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, killTimeout)
	defer cancel()
	total := 0
	var errs []error
	for _, user := range []string{"", "0:0"} {
		var out bytes.Buffer
		_, err := r.docker.Exec(ctx, t.ID(), runtime.ExecOptions{Cmd: []string{"/bin/sh", "-c", killWriters, "sandtray-kill", strconv.Itoa(main)},
			User: user, Stdout: &out, Stderr: &out})
		n, ok := strings.CutPrefix(strings.TrimSpace(out.String()), "killed ")
		k, convErr := strconv.Atoi(n)
		switch {
		case err != nil:
			errs = append(errs, t.Gone(err))
		case !ok || convErr != nil:
			errs = append(errs, fmt.Errorf("kill writers in %s as %q: %s", t.Name(), user, strings.TrimSpace(out.String())))
		default:
			total += k
		}
	}
	return total, errors.Join(errs...)
}

// StopSandbox stops t (docker kill): for a sandbox that went on growing
// past its limit after KillWriters. It starts again on next use, with its
// files.
func (r *Runner) StopSandbox(ctx context.Context, t sandbox.Handle) error {
	ctx, cancel := context.WithTimeout(ctx, killTimeout)
	defer cancel()
	return t.Gone(r.docker.Kill(ctx, t.ID()))
}
