package capture

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// The install's network window: while an offline sandbox is on the bridge
// for an install, nothing but the installer may use the network. Before the
// network is attached, every other process in the sandbox (background jobs,
// what they detached, kernels) is stopped with SIGSTOP, pass after pass until
// a pass finds none running, and so is its PID 1, from outside, unless it
// is an init of Sandtray's (a container started again runs its init from its
// own files); after the sandbox is offline again, exactly those processes
// are continued. The engine keeps new calls, and every other process it
// would start there, out meanwhile (Target.Hold).

// openWindow readies an offline sandbox for the network: it keeps new calls
// out (Target.Hold), waits for the calls in flight, and stops every other
// process (freeze). closeWindow ends it: with resume, it continues what was
// stopped; then it lets calls in again. A sandbox created with the network,
// or one whose install will be refused for the network, needs none of it.
func (c *Capture) openWindow(ctx context.Context, t Target, progress sandbox.Progress) (closeWindow func(resume bool) error, err error) {
	if t.Network == sandbox.NetworkBridge {
		return func(bool) error { return nil }, nil
	}
	release := func() {}
	if t.Hold != nil {
		report(progress, 0, 0, "waiting for the calls running in sandbox "+t.Name()+" to end; new calls wait for the install")
		if release, err = t.Hold(ctx); err != nil {
			return nil, err
		}
	}
	f, err := c.freeze(ctx, t)
	if err != nil {
		release()
		return nil, err
	}
	return func(resume bool) error {
		defer release()
		if !resume {
			c.log.Error("sandbox left online after an install: its other processes stay stopped", "sandbox", t.Name(), "stopped", len(f.procs))
			return fmt.Errorf("the %d other processes of sandbox %s stay stopped, as it is still online; restart the sandbox: %w", len(f.procs), t.Name(), sandbox.ErrConflict)
		}
		return c.thaw(ctx, t, f)
	}, nil
}

// A pass is the agent's freeze (sandtray-agent freeze, run with an exec of
// its own: never a program of the sandbox's): it stops every process that
// runs but PID 1, itself and the agents serving the engine's sessions, and
// prints "stopped <pid> <start time>" for each, then "pass <uid> <roots>
// <left>": its own uid, how many processes came in from outside the sandbox
// (parent 0: the runtime's execs), and how many running processes it was
// not allowed to stop (another uid: without capabilities a process may
// signal only its own uid's). The thaw (sandtray-agent thaw) continues the
// processes given as "<pid> <start time>" pairs, each only while it is
// still that process, and prints "resumed <n>".

// maxPassOutput bounds what one pass may print: a line per process.
const maxPassOutput = 1 << 20

// freezeRounds bounds the rounds of passes; a sandbox whose processes keep
// starting new ones past it is not frozen, and the install is refused.
const freezeRounds = 20

// frozen is what a freeze stopped: pid and start time, each once, and
// whether PID 1.
type frozen struct {
	procs []string // "<pid> <start time>"
	seen  map[string]bool
	init  bool // PID 1, stopped from outside (Target.SignalInit)
}

func (f *frozen) add(pid, start string) {
	k := pid + " " + start
	if !f.seen[k] {
		f.seen[k] = true
		f.procs = append(f.procs, k)
	}
}

// passUsers are who passes run as: the sandbox's own user ("", the
// container's), who runs every call, and root, who runs installs. Each may
// stop only its own uid's processes.
var passUsers = []string{"", installUser}

// freeze stops pid 1 of t from outside when it is not an init of
// Sandtray's, then every other process running in t, until a round of
// passes (as the sandbox's user, then as root) finds none running that it
// did not stop before, and every exec the engine has in flight in t has
// started (so none can start later, outside the freeze). It returns what it
// stopped. When it cannot get there, it continues what it stopped and
// refuses the install.
//
// No signal from inside the sandbox reaches PID 1. Sandtray's own inits
// run on (they reap, and run nothing of the sandbox's); any other (a
// container started again runs its init from its own files, which the
// sandbox may have changed) is stopped first, so that nothing it starts
// escapes the passes.
func (c *Capture) freeze(ctx context.Context, t Target) (*frozen, error) {
	f := &frozen{seen: map[string]bool{}}
	if err := c.freezeInit(ctx, t, f); err != nil {
		return nil, err
	}
	users := passUsers
	var why string
	for round, wait := 0, 10*time.Millisecond; round < freezeRounds; round++ {
		execs, starting := c.docker.ExecsIn(t.ID()), c.docker.StartingIn(t.ID())
		stopped, roots, left := 0, 0, 0
		for i, u := range users {
			p, err := c.freezeOnce(ctx, t, u, f)
			if err != nil {
				return nil, errors.Join(err, c.thaw(ctx, t, f))
			}
			stopped, roots, left = stopped+p.stopped, p.roots, left+p.left
			if i == 0 && p.uid == "0" {
				users = users[:1] // the sandbox's user is root: one pass does
				break
			}
		}
		switch {
		case stopped == 0 && left == 0 && starting == 0 && roots >= execs:
			return f, nil
		case left > 0:
			why = fmt.Sprintf("%d processes run as a user that is neither the sandbox's nor root", left)
		case stopped > 0:
			why = "its processes kept starting new ones"
		default:
			why = "calls in it were still starting"
		}
		select {
		case <-ctx.Done():
			return nil, errors.Join(fmt.Errorf("stop the other processes in sandbox %s for the install: %w", t.Name(), ctx.Err()), c.thaw(ctx, t, f))
		case <-time.After(wait):
		}
		wait = min(2*wait, 250*time.Millisecond)
	}
	err := fmt.Errorf("sandbox %s cannot be given the network for the install: its other processes must be stopped while it is online, and they could not be (%s). "+
		"Nothing went online. Stop its background jobs (job_stop) or what they started, and try again: %w", t.Name(), why, sandbox.ErrConflict)
	return nil, errors.Join(err, c.thaw(ctx, t, f))
}

// freezeInit stops t's PID 1 from outside unless it is an init of
// Sandtray's (see freeze); one that cannot be told is stopped.
func (c *Capture) freezeInit(ctx context.Context, t Target, f *frozen) error {
	if t.SignalInit == nil {
		return nil
	}
	if t.InitIsOurs != nil {
		ours, err := t.InitIsOurs(ctx)
		if err == nil && ours {
			return nil
		}
	}
	if err := t.SignalInit(ctx, "SIGSTOP"); err != nil {
		return fmt.Errorf("stop the init (PID 1) of sandbox %s for the install: %w", t.Name(), err)
	}
	f.init = true
	return nil
}

// passResult is one pass's summary line.
type passResult struct {
	uid                  string
	stopped, roots, left int
}

// freezeOnce runs one pass as user and adds what it stopped to f.
func (c *Capture) freezeOnce(ctx context.Context, t Target, user string, f *frozen) (passResult, error) {
	raw, err := c.docker.ExecAgent(ctx, t.ID(), user, []string{"freeze"}, nil, maxPassOutput)
	out := bytes.NewBuffer(raw)
	if err != nil {
		return passResult{}, t.Gone(fmt.Errorf("stop the other processes in sandbox %s for the install: %w", t.Name(), err))
	}
	var p passResult
	done := false
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		w := strings.Fields(sc.Text())
		switch {
		case len(w) == 3 && w[0] == "stopped":
			f.add(w[1], w[2])
			p.stopped++
		case len(w) == 4 && w[0] == "pass":
			p.uid = w[1]
			p.roots, _ = strconv.Atoi(w[2])
			p.left, _ = strconv.Atoi(w[3])
			done = true
		}
	}
	if !done {
		return p, fmt.Errorf("stop the other processes in sandbox %s for the install: the pass did not finish (%q): %w", t.Name(), out.String(), sandbox.ErrConflict)
	}
	return p, nil
}

// thaw continues what f stopped, as each user a pass ran as, then PID 1 if
// freeze stopped it, on a context of its own (a cancelled install still
// resumes them), trying again while Docker fails.
func (c *Capture) thaw(ctx context.Context, t Target, f *frozen) error {
	if f == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreTimeout)
	defer cancel()
	err := c.thawProcs(ctx, t, f)
	if f.init {
		if ierr := c.continueInit(ctx, t); ierr != nil {
			err = errors.Join(err, ierr)
		}
	}
	return err
}

// continueInit continues PID 1 of t (see freeze), trying again while Docker
// fails.
func (c *Capture) continueInit(ctx context.Context, t Target) error {
	for wait := 250 * time.Millisecond; ; wait *= 2 {
		err := t.SignalInit(ctx, "SIGCONT")
		if err == nil || errors.Is(err, sandbox.ErrNotFound) || errors.Is(err, sandbox.ErrConflict) {
			return nil // continued, or the sandbox is gone or stopped: nothing left stopped
		}
		select {
		case <-ctx.Done():
			c.log.Error("continue a sandbox's init after an install", "sandbox", t.Name(), "err", err)
			return fmt.Errorf("could not continue the init (PID 1) of sandbox %s that was stopped for the install (restart the sandbox): %w", t.Name(), err)
		case <-time.After(wait):
		}
	}
}

// thawProcs continues the processes the passes stopped (see thaw).
func (c *Capture) thawProcs(ctx context.Context, t Target, f *frozen) error {
	if len(f.procs) == 0 {
		return nil
	}
	args := []string{"thaw"}
	for _, p := range f.procs {
		args = append(args, strings.Fields(p)...)
	}
	var err error
	for _, u := range passUsers {
		for wait := 250 * time.Millisecond; ; wait *= 2 {
			var out []byte
			out, err = c.docker.ExecAgent(ctx, t.ID(), u, args, nil, 256)
			if err == nil && strings.HasPrefix(string(out), "resumed ") {
				break
			}
			if err == nil {
				err = fmt.Errorf("the resume pass said %q", out)
			}
			if errors.Is(t.Gone(err), sandbox.ErrNotFound) || ctx.Err() != nil {
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
		}
		if err != nil {
			break
		}
	}
	if err != nil {
		c.log.Error("resume a sandbox's processes after an install", "sandbox", t.Name(), "err", err)
		return fmt.Errorf("could not resume the processes of sandbox %s that were stopped for the install (restart the sandbox to end them): %w", t.Name(), err)
	}
	return nil
}
