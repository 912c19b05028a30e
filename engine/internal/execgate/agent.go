package execgate

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/internal/agentclient"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Every sandbox has the agent (package agent), read-only at
// runtime.AgentPath, and the gate keeps one session with it per sandbox
// (engine/internal/agentclient): the sandbox's own processes, files and
// connections go through it, with no container exec each. The session is
// the agent's stdin and stdout: those of PID 1 when the engine attached
// them at the sandbox's creation (SetSession), else an exec of `agent
// serve`, made on first use and again whenever the session has ended (the
// agent died, broke the protocol, the sandbox restarted).
//
// What goes through the runtime's exec instead: processes of another user
// than the session's (root, for a sandbox that runs as another user), an
// install's (its window freezes the session's processes), and the agent's
// own subcommands that must not depend on the session (ExecAgent: the tree
// kill's fallback, the freeze, the disk watch's kill). Each of those runs
// the agent's binary, never a program of the sandbox's: `agent run` wraps
// the process (its group and its marker's sweep), `agent kill` kills.

// dialTimeout bounds starting a session with a sandbox's agent.
const dialTimeout = 20 * time.Second

// sessionKillTimeout bounds a kill through the session before the exec of
// the agent's own kill takes over.
const sessionKillTimeout = 2 * time.Second

// sessions are the gate's sessions, one per container.
type sessions struct {
	mu      sync.Mutex
	m       map[string]*agentclient.Session // guarded by mu
	dialing map[string]chan struct{}        // guarded by mu: closed when that container's dial ends
}

// SetAgent gives the gate the agent's binary (to put into a container made
// before Sandtray had its agent) and a logger for its sessions.
func (x *Runtime) SetAgent(a *runtime.Agent, log *slog.Logger) {
	x.mu.Lock()
	x.agent, x.log = a, log
	x.mu.Unlock()
}

// SetSession makes s container id's session (one the engine started on
// the container's attachment); a session it had is closed.
func (x *Runtime) SetSession(id string, s *agentclient.Session) {
	x.sess.mu.Lock()
	old := x.sess.m[id]
	x.sess.m[id] = s
	x.sess.mu.Unlock()
	if old != nil && old != s {
		old.Close()
	}
}

// Forget ends container id's session (it stopped, or is gone).
func (x *Runtime) Forget(id string) {
	x.sess.mu.Lock()
	s := x.sess.m[id]
	delete(x.sess.m, id)
	x.sess.mu.Unlock()
	if s != nil {
		s.Close()
	}
}

// CloseSessions ends every session and link (the engine is closing).
func (x *Runtime) CloseSessions() {
	x.closeLinks()
	x.sess.mu.Lock()
	m := x.sess.m
	x.sess.m = map[string]*agentclient.Session{}
	x.sess.mu.Unlock()
	for _, s := range m {
		s.Close()
	}
}

// Session returns container id's live session, starting one (on its link,
// else an exec of `agent serve`) when it has none: one dial at a time per
// container.
func (x *Runtime) Session(ctx context.Context, id string) (*agentclient.Session, error) {
	for {
		x.sess.mu.Lock()
		if s := x.sess.m[id]; s != nil && !s.Closed() {
			x.sess.mu.Unlock()
			return s, nil
		}
		if w := x.sess.dialing[id]; w != nil {
			x.sess.mu.Unlock()
			select {
			case <-w:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		w := make(chan struct{})
		x.sess.dialing[id] = w
		x.sess.mu.Unlock()
		s, err := x.dial(ctx, id)
		x.sess.mu.Lock()
		delete(x.sess.dialing, id)
		if err == nil {
			if old := x.sess.m[id]; old != nil && old != s { // the link's is s itself
				old.Close()
			}
			x.sess.m[id] = s
		}
		x.sess.mu.Unlock()
		close(w)
		return s, err
	}
}

// NewSession starts a session of its own with container id's agent (an
// exec of `agent serve`), which the caller closes: an install's channel,
// started after its freeze, which stopped the processes of the others.
func (x *Runtime) NewSession(ctx context.Context, id string) (*agentclient.Session, error) {
	return x.dialExec(ctx, id)
}

// dial is a new session with container id's agent: on its link when it
// has one (link.go), else over an exec.
func (x *Runtime) dial(ctx context.Context, id string) (*agentclient.Session, error) {
	if s := x.linkSession(ctx, id); s != nil {
		return s, nil
	}
	return x.dialExec(ctx, id)
}

// dialExec starts `agent serve` in container id and a session with it. A
// container made before Sandtray had its agent gets it first, in its own
// files (where the sandbox can change it: such a sandbox is told apart, see
// runtime.Container.Agent), when its root is writable.
func (x *Runtime) dialExec(ctx context.Context, id string) (*agentclient.Session, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	s, err := x.serve(ctx, id)
	if err == nil || ctx.Err() != nil {
		return s, err
	}
	c, ierr := x.Full.Inspect(ctx, id)
	if ierr != nil {
		return nil, ierr
	}
	if run := c.State == "running"; !run {
		return nil, fmt.Errorf("sandbox %s is not running (%s): %w", sandbox.ShortID(id), c.State, sandbox.ErrConflict)
	}
	if c.Agent {
		return nil, err
	}
	if c.ReadOnlyRoot {
		return nil, fmt.Errorf("sandbox %s was made by an older Sandtray, without the agent every sandbox has now, and its root is read-only, "+
			"so the agent cannot be added: fork it (fork_sandbox) or make a new one: %w", sandbox.ShortID(id), sandbox.ErrUnsupported)
	}
	if cerr := x.installAgent(ctx, id); cerr != nil {
		return nil, fmt.Errorf("put the agent into sandbox %s, made by an older Sandtray: %w", sandbox.ShortID(id), cerr)
	}
	return x.serve(ctx, id)
}

func (x *Runtime) serve(ctx context.Context, id string) (*agentclient.Session, error) {
	conn, err := x.Full.ExecStream(ctx, id, "", []string{runtime.AgentPath, "serve"})
	if err != nil {
		return nil, err
	}
	x.mu.RLock()
	log := x.log
	x.mu.RUnlock()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s, err := agentclient.New(ctx, conn, log.With("sandbox", sandbox.ShortID(id)))
	if err != nil {
		return nil, fmt.Errorf("start the agent in sandbox %s: %w", sandbox.ShortID(id), err)
	}
	return s, nil
}

// installAgent copies the agent into a container's own files.
func (x *Runtime) installAgent(ctx context.Context, id string) error {
	x.mu.RLock()
	a := x.agent
	x.mu.RUnlock()
	if a == nil {
		return errors.New("the engine has no agent to give")
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir, name := runtime.AgentDir[1:], runtime.AgentPath[len(runtime.AgentDir)+1:]
	_ = tw.WriteHeader(&tar.Header{Name: dir + "/", Mode: 0o755, Typeflag: tar.TypeDir})
	_ = tw.WriteHeader(&tar.Header{Name: dir + "/" + name, Mode: 0o555, Size: int64(len(a.Binary)), Typeflag: tar.TypeReg})
	_, _ = tw.Write(a.Binary)
	_ = tw.Close()
	return x.Full.CopyTo(ctx, id, "/", &buf)
}

// ownUser reports whether a process run as user ("" is the container's
// own) can go through container id's session, whose agent runs as uid.
func ownUser(user string, uid int) bool {
	switch user {
	case "":
		return true
	case "root", "0", "0:0":
		return uid == 0
	}
	return false
}

// spawn runs o through container id's session when o is the session's
// user's and not an install's; ok is false when it must take the exec
// path instead. A session that turns out to have ended before the process
// started (the agent died, the container stopped or went) is started
// again once, which tells why when it cannot be.
func (x *Runtime) spawn(ctx context.Context, id string, o runtime.ExecOptions) (code int, ok bool, err error) {
	if installOf(ctx, id) {
		return 0, false, nil
	}
	for try := 0; ; try++ {
		s, err := x.Session(ctx, id)
		if err != nil {
			return -1, true, err
		}
		if !ownUser(o.User, s.UID) {
			return 0, false, nil
		}
		started, err := x.enterSpawn(ctx, id)
		if err != nil {
			return -1, true, err
		}
		ran := false
		exit, err := s.Run(ctx, agentclient.Process{Argv: o.Cmd, Env: o.Env, Dir: o.Workdir, Marker: o.Marker,
			Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr, Started: func(int) { ran = true; started() }})
		started()
		switch {
		case errors.Is(err, agentclient.ErrClosed) && !ran && try == 0 && ctx.Err() == nil:
			x.drop(id, s)
			continue
		case errors.Is(err, agentclient.ErrClosed) && ran && o.Marker != "":
			// The agent died under the process: what it started lives on
			// (an orphan of PID 1) unless killed from outside.
			// (A sandbox that stopped has nothing left to kill: its error
			// is not the call's, which must not read as "not running" and
			// start it again.)
			x.drop(id, s)
			kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dialTimeout)
			if _, kerr := x.KillGroups(kctx, id, o.User, o.Marker, nil); kerr != nil {
				x.mu.RLock()
				log := x.log
				x.mu.RUnlock()
				if log != nil {
					log.Debug("kill what a call whose agent died had started", "sandbox", sandbox.ShortID(id), "err", kerr)
				}
			}
			cancel()
		case errors.Is(err, agentclient.ErrNoProgram):
			return -1, true, fmt.Errorf("%w: %w", err, sandbox.ErrUnsupported)
		}
		return exit.Code, true, err
	}
}

// drop forgets container id's session s, which has ended.
func (x *Runtime) drop(id string, s *agentclient.Session) {
	x.sess.mu.Lock()
	if x.sess.m[id] == s {
		delete(x.sess.m, id)
	}
	x.sess.mu.Unlock()
	s.Close()
}

// wrapped is o's command under the agent's process wrapper, for the exec
// path: its workdir entered by the agent (Docker is given "/", so a
// sandbox whose workdir went still runs), its group and marker swept when
// it ends.
func wrapped(o runtime.ExecOptions) []string {
	cmd := []string{runtime.AgentPath, "run"}
	if o.Workdir != "" {
		cmd = append(cmd, "--dir="+o.Workdir)
	}
	if o.Marker != "" {
		cmd = append(cmd, "--marker="+o.Marker)
	}
	return append(append(cmd, "--"), o.Cmd...)
}

// KillGroups kills container id's process groups and what carries marker
// ("" for none), as user: through its session when it has a live one of
// that user, else with an exec of `agent kill`. It reports how many
// processes it killed.
func (x *Runtime) KillGroups(ctx context.Context, id, user, marker string, groups []int) (int, error) {
	x.sess.mu.Lock()
	s := x.sess.m[id]
	x.sess.mu.Unlock()
	if s != nil && !s.Closed() && ownUser(user, s.UID) {
		// The agent is given a moment: one that does not answer leaves
		// the kill to an exec of its own, from outside.
		sctx, cancel := context.WithTimeout(ctx, sessionKillTimeout)
		n, err := s.Kill(sctx, groups, marker)
		cancel()
		if err == nil {
			return n, nil
		}
	}
	args := []string{"kill"}
	if marker != "" {
		args = append(args, "--marker="+marker)
	}
	for _, g := range groups {
		args = append(args, strconv.Itoa(g))
	}
	out, err := x.ExecAgent(ctx, id, user, args, nil, 256)
	if err != nil {
		return 0, err
	}
	var n int
	if _, err := fmt.Sscanf(string(out), "killed %d", &n); err != nil {
		return 0, fmt.Errorf("kill in sandbox %s: the agent said %q", sandbox.ShortID(id), out)
	}
	return n, nil
}

// ExecAgent runs the agent's subcommand args in container id as user with
// an exec of its own (not the session), and returns at most max bytes of
// its stdout; what it prints past that is read and dropped. It passes the
// gate as every process does.
func (x *Runtime) ExecAgent(ctx context.Context, id, user string, args []string, stdin io.Reader, max int) ([]byte, error) {
	leave, err := x.enter(ctx, id)
	if err != nil {
		return nil, err
	}
	defer leave()
	out := &capped{max: max}
	errOut := &capped{max: 1 << 10}
	code, err := x.Full.Exec(ctx, id, runtime.ExecOptions{Cmd: append([]string{runtime.AgentPath}, args...), User: user,
		Stdin: stdin, Stdout: out, Stderr: errOut})
	if err != nil {
		return nil, err
	}
	if code != 0 {
		return out.Bytes(), &AgentExit{Command: args[0], Code: code, Stderr: string(bytes.TrimSpace(errOut.Bytes()))}
	}
	return out.Bytes(), nil
}

// AgentExit is an exec of the agent's subcommand that ended with an exit
// code other than 0: what it said on stderr (the start of it) says why.
type AgentExit struct {
	Command string
	Code    int
	Stderr  string
}

func (e *AgentExit) Error() string {
	return fmt.Sprintf("sandtray-agent %s: exit %d: %s", e.Command, e.Code, e.Stderr)
}

// capped keeps the first max bytes written to it.
type capped struct {
	bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// Agent is container id's session, for what is not a process (files,
// connections): it waits, as processes do, while an install holds the
// container (but for the install's own).
func (x *Runtime) Agent(ctx context.Context, id string) (*agentclient.Session, error) {
	if err := x.Wait(ctx, id); err != nil {
		return nil, fmt.Errorf("sandbox %s is installing packages with the network on (install_packages), and waits for it to end: %w: %w",
			sandbox.ShortID(id), sandbox.ErrConflict, err)
	}
	return x.Session(ctx, id)
}
