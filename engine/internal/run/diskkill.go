package run

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Init is what the disk watch knows of a sandbox's PID 1 before it kills
// every other writer: processes inside cannot kill it, so the kill spares
// it, and that is safe only while it is an init of Sandtray's that runs
// nothing of the sandbox's.
type Init struct {
	// Ours: PID 1 is the agent (from its read-only volume), Docker's own
	// init, or an older Sandtray's in the run the engine started it in.
	// Otherwise (an older Sandtray's container started again runs its
	// main command from its own files, which the sandbox may have
	// changed) PID 1 is one of the sandbox's processes, and the watch
	// stops the sandbox instead of sparing it.
	Ours bool
	// Main is MainOldest when PID 1's oldest child is the sandbox's main
	// process, whose end would stop it (docker-init's main command, in a
	// container of an older Sandtray), else 0.
	Main int
	// Spare are the processes the kill spares besides PID 1 and the
	// engine's own agents: the kernels, whose state the user keeps.
	Spare []int
}

// MainOldest spares PID 1's oldest child (see Init.Main).
const MainOldest = -1

// KillWriters kills the processes in t that may be writing while no call
// runs: every one but PID 1, the engine's agents (their parent is 0 in the
// sandbox: only the runtime starts those, so no process can make itself
// one) and what init says to spare, with an exec of the agent's own
// killwriters as the sandbox's user and as root (without capabilities each
// may only signal its own uid's processes, and a process may have been
// left by an install, which runs as root). It returns how many it killed.
func (r *Runner) KillWriters(ctx context.Context, t sandbox.Handle, init Init) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, killTimeout)
	defer cancel()
	args := []string{"killwriters"}
	if init.Main == MainOldest {
		args = append(args, "--oldest-child")
	}
	for _, p := range init.Spare {
		args = append(args, strconv.Itoa(p))
	}
	total := 0
	var errs []error
	for _, user := range []string{"", "0:0"} {
		out, err := r.docker.ExecAgent(ctx, t.ID(), user, args, nil, 256)
		n, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "killed ")
		k, convErr := strconv.Atoi(n)
		switch {
		case err != nil:
			errs = append(errs, t.Gone(err))
		case !ok || convErr != nil:
			errs = append(errs, fmt.Errorf("kill writers in %s as %q: the agent said %q", t.Name(), user, out))
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
