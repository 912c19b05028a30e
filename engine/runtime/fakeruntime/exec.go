package fakeruntime

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Handler simulates a process: it reads p.Stdin, writes p.Stdout and
// p.Stderr, and returns the process's exit code when it ends; to hang, it
// waits on p.Done (closed when the process is killed), and to die, it
// returns (137 for a SIGKILL; p.OOMKill for a kill for memory). A handler
// that has nothing to say about p returns p.Builtin().
type Handler func(p *Proc) int

// Proc is a process Exec or ExecStream started in a container.
//
// The commands the engine runs on its own are handled before any Handler:
//
//   - the agent (runtime.AgentPath, see agent.go): `serve` serves the
//     engine's session, whose spawns are Procs of their own; `run`'s
//     wrapper is taken off (the Handler sees the command in Cmd, Raw has it
//     all, and the marker, the SANDTRAY_EXEC variable, ties the process to
//     its call); `kill` kills the processes with a call's marker; `oom`
//     prints the container's OOM-kill count (raised by OOMKill and
//     Runtime.Die); the others answer as the agent would with nothing to
//     do;
//   - its kernel launcher (engine/internal/kernel: /bin/sh -c <launcher>
//     sandtray-kernel …) exits with status 218, the launcher's "this image
//     has no python3": the engine then runs code as plain processes.
type Proc struct {
	ContainerID string
	Hostname    string   // the container's hostname (its name when none was set)
	Cmd         []string // the command (the engine's wrapper taken off)
	Raw         []string // the command as Exec was given it
	Env         []string // KEY=VALUE: the container's, then the exec's
	User        string
	Workdir     string
	Stdin       io.Reader // never nil (empty without stdin)
	Stdout      io.Writer
	Stderr      io.Writer

	ctx    context.Context
	cancel context.CancelFunc
	killed atomic.Bool
	pid    int // a pid, for the processes the fake agent starts
	r      *Runtime
	c      *container
}

// Done is closed when the process is killed (its container stopped or
// was removed, or the engine killed its process group), or has ended.
func (p *Proc) Done() <-chan struct{} { return p.ctx.Done() }

// Context is done when Done is closed.
func (p *Proc) Context() context.Context { return p.ctx }

// Killed reports whether the process was killed.
func (p *Proc) Killed() bool { return p.killed.Load() }

func (p *Proc) kill() {
	p.killed.Store(true)
	p.cancel()
}

// Script is the shell script of a "/bin/sh -c script" (or "sh -c")
// command, else the command's words joined by spaces.
func (p *Proc) Script() string {
	if len(p.Cmd) >= 3 && (p.Cmd[0] == "/bin/sh" || p.Cmd[0] == "sh") && p.Cmd[1] == "-c" {
		return p.Cmd[2]
	}
	return strings.Join(p.Cmd, " ")
}

// Getenv is the value of name in the process's environment (the last one
// wins, as with Docker's exec).
func (p *Proc) Getenv(name string) string {
	v := ""
	for _, kv := range p.Env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// Sleep waits d, or until the process is killed: it reports whether the
// whole d passed.
func (p *Proc) Sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.Done():
		return false
	}
}

// ReadFile reads a file of the container (relative to Workdir).
func (p *Proc) ReadFile(name string) ([]byte, error) {
	p.r.d.mu.Lock()
	defer p.r.d.mu.Unlock()
	n, ok := p.c.files[p.abs(name)]
	if !ok || n.mode.IsDir() {
		return nil, fmt.Errorf("%s: no such file: %w", name, sandbox.ErrNotFound)
	}
	return bytes.Clone(n.data), nil
}

// WriteFile writes a file of the container (relative to Workdir), making
// its parent folders.
func (p *Proc) WriteFile(name string, data []byte) error {
	p.r.d.mu.Lock()
	defer p.r.d.mu.Unlock()
	return p.c.files.writeFile(p.abs(name), data, 0o644, true)
}

func (p *Proc) abs(name string) string {
	if strings.HasPrefix(name, "/") {
		return clean(name)
	}
	return clean(cmpOr(p.Workdir, "/") + "/" + name)
}

// OOMKill is the process killed for memory: its container's OOM-kill
// count rises and an oom event is sent. It returns 137, the exit code of a
// process killed so.
func (p *Proc) OOMKill() int {
	p.r.d.mu.Lock()
	p.c.oomKills++
	p.r.d.emit(p.c, "oom")
	p.r.d.mu.Unlock()
	p.kill()
	return 137
}

func cmpOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// start registers a process of cmd in the running container id. Callers
// do not hold d.mu.
func (r *Runtime) start(ctx context.Context, method, op, id string, cmd, env []string, user, workdir string) (*Proc, Handler, error) {
	if err := r.lock(ctx, method); err != nil {
		return nil, nil, err
	}
	defer r.unlock()
	c, err := r.d.get(op, id)
	if err != nil {
		return nil, nil, err
	}
	if !c.running() {
		return nil, nil, notRunning(op, c)
	}
	pctx, cancel := context.WithCancel(context.Background())
	p := &Proc{
		ContainerID: c.id, Hostname: cmpOr(c.opts.Hostname, c.name), Cmd: slices.Clone(cmd), Raw: slices.Clone(cmd),
		Env:  append(slices.Clone(c.opts.Env), env...),
		User: cmpOr(user, c.opts.User), Workdir: workdir, Stdin: strings.NewReader(""),
		ctx: pctx, cancel: cancel, r: r, c: c,
	}
	c.procs[p] = struct{}{}
	return p, r.d.handler, nil
}

// run runs p to its end and unregisters it; gone reports that its
// container was removed meanwhile.
func (r *Runtime) run(p *Proc, h Handler) (code int, gone bool) {
	code = p.dispatch(h)
	r.d.mu.Lock()
	delete(p.c.procs, p)
	_, ok := r.d.containers[p.c.id]
	r.d.mu.Unlock()
	p.cancel()
	return code, !ok
}

// dispatch runs the engine's own commands (see Proc), and hands the
// others to h.
func (p *Proc) dispatch(h Handler) int {
	if code, ok := p.agentCmd(); ok {
		return code
	}
	if len(p.Raw) > 3 && p.Raw[3] == "sandtray-kernel" || len(p.Cmd) > 3 && p.Cmd[3] == "sandtray-kernel" {
		return 218
	}
	if h == nil {
		return p.Builtin()
	}
	return h(p)
}

// killCall kills the processes of the container that carry the call
// marker key (but p).
func (p *Proc) killCall(key string) {
	if key == "" {
		return
	}
	p.r.d.mu.Lock()
	defer p.r.d.mu.Unlock()
	for q := range p.c.procs {
		if q != p && q.Getenv("SANDTRAY_EXEC") == key {
			q.kill()
		}
	}
}

// gated is an output stream that goes nowhere once its exec has returned,
// as a Docker exec's connection, closed, takes nothing more.
type gated struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

func (g *gated) Write(b []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || g.w == nil {
		return len(b), nil
	}
	return g.w.Write(b)
}

func (g *gated) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// Exec runs o in a running container to its end and returns its exit
// code; a container that does not run is sandbox.ErrConflict, a missing
// one sandbox.ErrNotFound (also when it is removed while the process
// runs). As the Docker runtime's, it returns at once when ctx is done,
// with an error wrapping ctx.Err(), and the process is not killed then.
// o.Stdin is copied to the process and closed; a Stdin with a StreamEnded
// method is told when the output has ended.
func (r *Runtime) Exec(ctx context.Context, id string, o runtime.ExecOptions) (int, error) {
	op := "exec in container " + id
	p, h, err := r.start(ctx, "Exec", op, id, o.Cmd, o.Env, o.User, o.Workdir)
	if err != nil {
		return -1, err
	}
	stdout, stderr := &gated{w: o.Stdout}, &gated{w: o.Stderr}
	p.Stdout, p.Stderr = stdout, stderr
	copied := make(chan struct{})
	var stdinR *io.PipeReader
	if o.Stdin != nil {
		var stdinW *io.PipeWriter
		stdinR, stdinW = io.Pipe()
		p.Stdin = stdinR
		go func() {
			defer close(copied)
			_, _ = io.Copy(stdinW, o.Stdin)
			_ = stdinW.Close()
		}()
	} else {
		close(copied)
	}
	type end struct {
		code int
		gone bool
	}
	done := make(chan end, 1)
	go func() {
		code, gone := r.run(p, h)
		done <- end{code, gone}
	}()
	var e end
	ended := false
	select {
	case e = <-done:
		ended = true
	case <-ctx.Done():
	}
	stdout.close()
	stderr.close()
	if stdinR != nil {
		stdinR.CloseWithError(io.ErrClosedPipe)
	}
	if s, ok := o.Stdin.(interface{ StreamEnded() }); ok {
		s.StreamEnded()
	}
	<-copied
	switch {
	case !ended:
		return -1, fmt.Errorf("%s: %w", op, ctx.Err())
	case e.gone:
		return -1, noContainer(op, id)
	}
	return e.code, nil
}

// stderrKept bounds what an ExecConn keeps of stderr, as Docker's does.
const stderrKept = 4 << 10

// execConn is ExecStream's process.
type execConn struct {
	r       *Runtime
	id      string
	stdinW  *io.PipeWriter
	stdoutR *io.PipeReader
	done    chan struct{}
	code    int
	gone    bool

	mu     sync.Mutex
	stderr []byte
}

func (s *execConn) Write(b []byte) (int, error) { return s.stdinW.Write(b) }
func (s *execConn) Read(b []byte) (int, error)  { return s.stdoutR.Read(b) }
func (s *execConn) CloseWrite() error           { return s.stdinW.Close() }

// Close ends the stream both ways; the process is not killed, and reads
// EOF on its stdin.
func (s *execConn) Close() error {
	_ = s.stdinW.Close()
	s.stdoutR.CloseWithError(io.ErrClosedPipe)
	return nil
}

// Started returns at once: the process runs when ExecStream returns.
func (s *execConn) Started(ctx context.Context) error { return nil }

func (s *execConn) Stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.stderr)
}

func (s *execConn) writeStderr(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if room := stderrKept - len(s.stderr); room > 0 {
		s.stderr = append(s.stderr, b[:min(room, len(b))]...)
	}
	return len(b), nil
}

// ExitCode waits for the process's end.
func (s *execConn) ExitCode(ctx context.Context) (int, error) {
	select {
	case <-s.done:
	case <-ctx.Done():
		return -1, fmt.Errorf("exec stream exit code: %w", ctx.Err())
	}
	if s.gone {
		return -1, noContainer("exec stream exit code", s.id)
	}
	return s.code, nil
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// ExecStream starts cmd in a running container with its stdin and stdout
// as a byte stream (see runtime.ExecConn).
func (r *Runtime) ExecStream(ctx context.Context, id, user string, cmd []string) (runtime.ExecConn, error) {
	op := "exec stream in container " + id
	p, h, err := r.start(ctx, "ExecStream", op, id, cmd, nil, user, "")
	if err != nil {
		return nil, err
	}
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	s := &execConn{r: r, id: id, stdinW: stdinW, stdoutR: stdoutR, done: make(chan struct{})}
	p.Stdin, p.Stdout, p.Stderr = stdinR, stdoutW, writerFunc(s.writeStderr)
	go func() {
		s.code, s.gone = r.run(p, h)
		_ = stdoutW.Close()
		stdinR.CloseWithError(io.ErrClosedPipe)
		close(s.done)
	}()
	return s, nil
}

// list prints the engine's listing records (type, size, mode, mtime, link
// target, path; NUL-terminated, as its GNU find prints them) of the
// folder dir to depth levels, hidden entries (and what is under them)
// pruned unless all: exit code 3 when dir is not a folder.
func (p *Proc) list(dir, depth string, all bool) int {
	maxDepth, _ := strconv.Atoi(depth)
	dir = p.abs(dir)
	p.r.d.mu.Lock()
	n, ok := p.c.files[dir]
	if !ok || !n.mode.IsDir() {
		p.r.d.mu.Unlock()
		fmt.Fprintf(p.Stderr, "sh: 1: cd: can't cd to %s\n", dir)
		return 3
	}
	var out strings.Builder
	for _, q := range p.c.files.under(dir) {
		rel := strings.TrimPrefix(q, strings.TrimSuffix(dir, "/")+"/")
		parts := strings.Split(rel, "/")
		if len(parts) > maxDepth || !all && slices.ContainsFunc(parts, func(s string) bool { return strings.HasPrefix(s, ".") }) {
			continue
		}
		f := p.c.files[q]
		kind := "f"
		switch {
		case f.mode.IsDir():
			kind = "d"
		case f.mode&fs.ModeSymlink != 0:
			kind = "l"
		}
		fmt.Fprintf(&out, "%s\t%d\t%o\t%d.%09d\t%s\t%s\x00", kind, len(f.data), f.mode.Perm(), f.mtime.Unix(), f.mtime.Nanosecond(), f.link, rel)
	}
	p.r.d.mu.Unlock()
	io.WriteString(p.Stdout, out.String())
	return 0
}
