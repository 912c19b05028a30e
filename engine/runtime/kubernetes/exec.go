package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// executor is an exec of cmd in Pod id's container over WebSocket, falling
// back to SPDY only when the upgrade itself is refused: a command's
// non-zero exit is an error too, and falling back on any error would run
// it a second time.
func (c *Client) executor(id, ctr string, cmd []string, stdin bool) (remotecommand.Executor, error) {
	if c.execs != nil {
		return c.execs(id, ctr, cmd), nil
	}
	if c.cfg == nil {
		return nil, fmt.Errorf("kubernetes: exec in sandbox %s: this client has no connection to a cluster: %w", id, sandbox.ErrUnavailable)
	}
	req := c.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(c.ns).Name(id).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: ctr, Command: cmd, Stdin: stdin, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(c.cfg, http.MethodGet, req.URL().String())
	if err != nil {
		return nil, fmt.Errorf("kubernetes: websocket exec: %w", err)
	}
	sp, err := remotecommand.NewSPDYExecutor(c.cfg, http.MethodPost, req.URL())
	if err != nil {
		return nil, fmt.Errorf("kubernetes: spdy exec: %w", err)
	}
	return remotecommand.NewFallbackExecutor(ws, sp, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
}

// exec runs cmd in container ctr of Pod id to its end and returns its exit
// code; stdin (when not nil) is copied then closed.
func (c *Client) exec(ctx context.Context, id, ctr string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	ex, err := c.executor(id, ctr, cmd, stdin != nil)
	if err != nil {
		return -1, err
	}
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: orDiscard(stdout), Stderr: orDiscard(stderr)})
	return exitOf(ctx, id, err)
}

// exitOf reads a stream's end: a process's exit code, or why there is none.
func exitOf(ctx context.Context, id string, err error) (int, error) {
	var exit utilexec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &exit):
		return exit.ExitStatus(), nil
	case ctx.Err() != nil:
		return -1, fmt.Errorf("kubernetes: exec in sandbox %s: %w", id, ctx.Err())
	case strings.Contains(err.Error(), "container not found"), strings.Contains(err.Error(), "not running"),
		strings.Contains(err.Error(), "cannot exec"), strings.Contains(err.Error(), "is not valid for pod"):
		return -1, fmt.Errorf("kubernetes: exec in sandbox %s: it is not running: %w (%w)", id, sandbox.ErrConflict, err)
	case strings.Contains(err.Error(), "not found"):
		return -1, fmt.Errorf("kubernetes: exec in sandbox %s: %w (%w)", id, sandbox.ErrNotFound, err)
	}
	return -1, fmt.Errorf("kubernetes: exec in sandbox %s: %w (%w)", id, sandbox.ErrUnavailable, err)
}

// Exec runs o.Cmd in Pod id's container to its end and returns its exit
// code. The API's exec has no user, environment or folder of its own: a
// process runs as the Pod's one user (another fails with
// sandbox.ErrUnsupported), and its environment and folder are set by a
// shell (/bin/sh) and env in the sandbox, as Docker's runtime enters the
// workdir. A ctx that ends closes the stream; the process is not killed
// (as with Docker: the engine kills it through the agent).
func (c *Client) Exec(ctx context.Context, id string, o runtime.ExecOptions) (int, error) {
	cmd, err := c.command(ctx, id, o)
	if err != nil {
		return -1, err
	}
	code, err := c.exec(ctx, id, containerName, cmd, o.Stdin, o.Stdout, o.Stderr)
	if s, ok := o.Stdin.(interface{ StreamEnded() }); ok {
		s.StreamEnded() // a stdin idle between writes (a kernel's) ends its copy now
	}
	return code, err
}

// command is o's command as the API's exec runs it: in o.Workdir, with
// o.Env and the marker, as the Pod's user.
func (c *Client) command(ctx context.Context, id string, o runtime.ExecOptions) ([]string, error) {
	if o.User != "" {
		p, err := c.get(ctx, id)
		if err != nil {
			return nil, err
		}
		if !sameUser(o.User, p) {
			return nil, unsupported(fmt.Sprintf("run a process as %q in sandbox %s", o.User, id),
				fmt.Sprintf("every process of a Pod runs as its one user (%q)", cmpOr(p.Annotations[annoUser], "the image's")))
		}
	}
	env := o.Env
	if o.Marker != "" {
		env = append(env[:len(env):len(env)], "SANDTRAY_EXEC="+o.Marker)
	}
	cmd := o.Cmd
	if len(env) > 0 {
		cmd = append(append([]string{"env"}, env...), cmd...)
	}
	if o.Workdir != "" && o.Workdir != "/" {
		cmd = append([]string{"/bin/sh", "-c", enterWorkdir, o.Workdir}, cmd...)
	}
	return cmd, nil
}

// sameUser reports whether user names the Pod's own user.
func sameUser(user string, p *corev1.Pod) bool {
	own := p.Annotations[annoUser]
	if user == own {
		return true
	}
	uid, _, _ := strings.Cut(user, ":")
	ownUID, _, _ := strings.Cut(own, ":")
	if uid == ownUID {
		return true
	}
	return own == "" && (user == "root" || uid == "0") && runsAsRoot(p)
}

// runsAsRoot reports whether the Pod sets no user (the image's, root for
// Sandtray's image) or uid 0.
func runsAsRoot(p *corev1.Pod) bool {
	sc := p.Spec.SecurityContext
	return sc == nil || sc.RunAsUser == nil || *sc.RunAsUser == 0
}

// enterWorkdir puts an exec in its workdir (as Docker's runtime does): a
// workdir that cannot be entered is said on stderr and the command runs in /.
const enterWorkdir = `cd -- "$0" 2>/dev/null || { echo "sandtray: cannot enter the workdir $0 (not a folder any more?); running in /" >&2; cd /; }; exec "$@"`

// UserIDs resolves user ("" for the Pod's) as the sandbox's image has it,
// with id(1) in the sandbox.
func (c *Client) UserIDs(ctx context.Context, id, user string) (int, int, error) {
	args := []string{}
	if user != "" {
		name, _, _ := strings.Cut(user, ":")
		args = append(args, name)
	}
	out, errOut := runtime.NewCapped(outKept), runtime.NewCapped(stderrKept)
	script := `id -u "$@" && id -g "$@"`
	code, err := c.exec(ctx, id, containerName, append([]string{"/bin/sh", "-c", script, "sh"}, args...), nil, out, errOut)
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(out.String())
	if code != 0 || len(f) != 2 {
		return 0, 0, fmt.Errorf("kubernetes: sandbox %s has no user %q (%s): %w", id, user, strings.TrimSpace(errOut.String()), sandbox.ErrInvalid)
	}
	uid, err1 := strconv.Atoi(f[0])
	gid, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("kubernetes: id in sandbox %s printed %q: %w", id, out.String(), sandbox.ErrInvalid)
	}
	return uid, gid, nil
}

// ExecStream starts cmd in Pod id's container with its stdin and stdout as
// a byte stream (the engine's session with the agent, a port forward's
// relay). The stream lives until Close or the process's end, whatever
// happens to ctx.
func (c *Client) ExecStream(ctx context.Context, id, user string, cmd []string) (runtime.ExecConn, error) {
	full, err := c.command(ctx, id, runtime.ExecOptions{Cmd: cmd, User: user})
	if err != nil {
		return nil, err
	}
	ex, err := c.executor(id, containerName, full, true)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &execConn{in: inW, out: outR, cancel: cancel, done: make(chan struct{}), started: make(chan struct{}), stderr: runtime.Capped{Max: stderrKept}}
	go func() {
		defer close(s.done)
		err := ex.StreamWithContext(sctx, remotecommand.StreamOptions{Stdin: inR, Stdout: &firstByte{w: outW, s: s}, Stderr: &s.stderr})
		s.code, s.err = exitOf(sctx, id, err)
		if s.err == nil {
			s.once.Do(func() { close(s.started) })
		}
		outW.CloseWithError(s.err)
		inR.Close()
	}()
	return s, nil
}

// execConn is ExecStream's process.
type execConn struct {
	in      *io.PipeWriter
	out     *io.PipeReader
	cancel  context.CancelFunc
	done    chan struct{} // closed when the stream ended; then code and err are set
	code    int
	err     error
	started chan struct{} // closed at the first output, or at a clean end
	once    sync.Once
	stderr  runtime.Capped
}

func (s *execConn) Read(p []byte) (int, error)  { return s.out.Read(p) }
func (s *execConn) Write(p []byte) (int, error) { return s.in.Write(p) }

// CloseWrite closes the process's stdin; its stdout keeps flowing.
func (s *execConn) CloseWrite() error { return s.in.Close() }

// Close ends the stream and waits for it.
func (s *execConn) Close() error {
	s.in.Close()
	s.cancel()
	s.out.Close()
	<-s.done
	return nil
}

// Started returns once the process has written or ended, or at once when
// it has not yet: the API's exec does not say when a process starts, and a
// relay's process may read before it writes. A stream that failed says why.
func (s *execConn) Started(ctx context.Context) error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// Stderr is the start of what the process wrote to stderr.
func (s *execConn) Stderr() string { return s.stderr.String() }

// ExitCode waits for the process's end and returns its code.
func (s *execConn) ExitCode(ctx context.Context) (int, error) {
	select {
	case <-s.done:
		return s.code, s.err
	case <-ctx.Done():
		return -1, ctx.Err()
	}
}

// firstByte passes output on and marks the process started at its first.
type firstByte struct {
	w io.Writer
	s *execConn
}

func (f *firstByte) Write(p []byte) (int, error) {
	f.s.once.Do(func() { close(f.s.started) })
	return f.w.Write(p)
}

// stderrKept is how much of a process's stderr is kept, and outKept of an
// answer read whole (a stat, a user's ids, a cgroup's figures): the sandbox
// writes them, and could make them endless.
const (
	stderrKept = 4 << 10
	outKept    = 64 << 10
)

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
