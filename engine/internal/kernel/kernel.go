package kernel

import (
	"github.com/sandtray/sandtray/engine/internal/agentclient"

	"bytes"
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// The kernel's programs travel as arguments of its one docker exec, so
// nothing needs to be installed in the image. The supervisor runs on
// python3 for every language (see kernelsrc/supervisor.py); the driver is
// the program of the interpreter that runs the code.
var (
	//go:embed kernelsrc/supervisor.py
	kernelSupervisor string
	//go:embed kernelsrc/child.py
	kernelPython string
	//go:embed kernelsrc/child.bash
	kernelBash string
	//go:embed kernelsrc/child.js
	kernelJavascript string
)

var kernelDrivers = map[string]string{"python": kernelPython, "bash": kernelBash, "javascript": kernelJavascript}

// kernelUnavailable is the launcher's exit status when the image lacks
// python3 (for the supervisor) or the language's runtime: the call then
// takes the exec path, which reports a missing runtime in its own words.
const kernelUnavailable = 218

// kernelLauncher starts the supervisor: $1 is the language, $2 kernelBoot,
// $3 the workdir. It enters the workdir itself, as docker.Client.Exec's
// shell would (Docker is given "/"; a workdir that cannot be entered is
// said on stderr and the kernel runs in "/"): one shell less to start
// before a new sandbox's first call.
const kernelLauncher = `cd -- "$3" 2>/dev/null || { echo "sandtray: cannot enter the workdir $3 (not a folder any more?); running in /" >&2; cd /; }
command -v python3 >/dev/null 2>&1 || exit 218
case $1 in javascript) command -v node >/dev/null 2>&1 || exit 218;; bash) command -v bash >/dev/null 2>&1 || exit 218;; esac
exec python3 -c "$2" "$1"`

// kernelBoot is the supervisor's command line: it reads the supervisor's
// program and the driver from stdin (bootBlob), ahead of the frames, and
// runs the supervisor with the driver as its second argument. On stdin,
// not in arguments: the python kernel is a fork of the supervisor and shows
// its command line, and `ps` in a sandbox would list the two programs
// (some 20 kB) twice. Its first line marks the kernel's processes in `ps`.
const kernelBoot = `# Sandtray kernel: its programs come on stdin
import os, sys
def _sandtray_read(n):
    b = b""
    while len(b) < n:
        c = os.read(0, n - len(b))
        if not c:
            os._exit(1)
        b += c
    return b
_sandtray_n = [int(x) for x in _sandtray_read(20).split()]
_sandtray_src = _sandtray_read(_sandtray_n[0]).decode()
sys.argv.append(_sandtray_read(_sandtray_n[1]).decode())
del os, sys, _sandtray_read, _sandtray_n
exec(compile(_sandtray_src, "<string>", "exec"))`

// bootBlob is what kernelBoot reads: a 20-byte header with the two
// lengths, the supervisor's program, the driver.
func bootBlob(lang string) []byte {
	b := fmt.Appendf(nil, "%9d %9d\n", len(kernelSupervisor), len(kernelDrivers[lang]))
	return append(append(b, kernelSupervisor...), kernelDrivers[lang]...)
}

// startTimeout bounds a kernel's start, up to its hello.
const startTimeout = 20 * time.Second

// killTimeout bounds killing a kernel's processes from outside.
const killTimeout = 10 * time.Second

// ErrUnavailable means the image cannot run a kernel for the language: the
// call takes the exec path.
var ErrUnavailable = errors.New("no kernel for this image")

// kernel is one long-lived interpreter in a sandbox: a supervisor started
// with one docker exec and kept attached (or, for a sandbox's first, forked
// by its container's launcher on the container's attachment), and its child
// that runs the code.
type kernel struct {
	lang   string
	set    *Set
	target sandbox.Handle
	in     *kernelInput
	cancel context.CancelFunc // aborts the exec: the last resort of kill
	exited chan struct{}      // closed when the exec has ended
	hello  chan kernelHello

	mu       sync.Mutex
	call     *kernelCall // the run in progress
	pids     kernelHello
	dead     bool
	exitCode int   // the exec's, once it has ended
	endErr   error // why the exec ended; read after exited is closed
}

type kernelHello struct {
	PID   int `json:"pid"`   // the supervisor's
	Child int `json:"child"` // the interpreter's, which leads its process group
}

// kernelRequest is a run frame's payload.
type kernelRequest struct {
	ID       string // hex
	Code     string
	Cap      int // bytes per stream to send; the rest is counted
	OutDir   string
	MaxImage int
}

// encode is the run frame's payload: a line "<id> <cap> <max image>
// <outdir length>", then the outdir and the code, as they are. Not JSON: the
// supervisor would import json (and re) to read it, on every kernel's start.
func (r kernelRequest) encode() []byte {
	b := fmt.Appendf(nil, "%s %d %d %d\n", r.ID, r.Cap, r.MaxImage, len(r.OutDir))
	return append(append(b, r.OutDir...), r.Code...)
}

// kernelDone is how a run ended.
type kernelDone struct {
	ID          string `json:"id"`
	Exit        int    `json:"exit"`
	Interrupted bool   `json:"interrupted"`
	DroppedOut  int64  `json:"dropped_out"`
	DroppedErr  int64  `json:"dropped_err"`

	exited bool  // the interpreter exited: Exit is its status
	lost   error // the kernel broke or vanished mid-run
}

// kernelCall is the run in progress on a kernel.
type kernelCall struct {
	id     string
	out    *run.Output
	images []sandbox.Image
	done   chan kernelDone // the first end only
}

func (c *kernelCall) finish(d kernelDone) {
	select {
	case c.done <- d:
	default:
	}
}

// channel runs a kernel's streams until they end or ctx is done, and
// returns the exit code of the process at their other end.
type channel func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) (int, error)

// start starts a kernel for lang in t with one docker exec of the launcher,
// and waits for its hello. Its exec lives until the kernel is killed or the
// set's base context is done.
func (ks *Set) start(ctx context.Context, t sandbox.Handle, lang string) (*kernel, error) {
	cmd := []string{"/bin/sh", "-c", kernelLauncher, "sandtray-kernel", lang, kernelBoot, cmp.Or(t.Workdir(), "/")}
	return ks.startOn(ctx, t, lang, func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
		return ks.docker.Exec(ctx, t.ID(), runtime.ExecOptions{Cmd: cmd, Stdin: stdin, Stdout: stdout, Stderr: stderr})
	})
}

// startOn starts a kernel for lang in t on ch and waits for its hello.
func (ks *Set) startOn(ctx context.Context, t sandbox.Handle, lang string, ch channel) (*kernel, error) {
	execCtx, cancel := context.WithCancel(ks.base)
	in := newKernelInput()
	in.rest = bootBlob(lang) // the first bytes the exec reads
	k := &kernel{lang: lang, set: ks, target: t, in: in, cancel: cancel, exited: make(chan struct{}),
		hello: make(chan kernelHello, 1)}
	frames := &frameReader{max: max(64<<10, ks.limits.MaxImageBytes) + 64<<10, handle: k.onFrame, broken: func(err error) {
		ks.log.Warn("kernel protocol broken; killing the kernel", "sandbox", t.Name(), "language", lang, "err", err)
		k.lose(err)
	}}
	diag := run.NewCapBuffer(4 << 10)
	ks.wg.Add(1)
	go func() {
		defer ks.wg.Done()
		code, err := ch(execCtx, k.in, frames, diag)
		k.ended(code, err, diag)
	}()
	select {
	case h := <-k.hello:
		k.mu.Lock()
		k.pids = h
		k.mu.Unlock()
		return k, nil
	case <-k.exited:
		if k.exitCode == kernelUnavailable || errors.Is(k.endErr, agentclient.ErrNoProgram) {
			return nil, ErrUnavailable // no python3, or no shell to look with
		}
		// Wrapped, so a container removed behind the engine's back gets its
		// "no longer exists" sentence from Gone.
		return nil, t.Gone(fmt.Errorf("start %s kernel in sandbox %s: %w", lang, t.Name(), k.endErr))
	case <-ctx.Done():
		k.kill(ctx)
		return nil, fmt.Errorf("execution cancelled: %w", ctx.Err())
	case <-time.After(startTimeout):
		k.kill(ctx)
		return nil, fmt.Errorf("the %s kernel in sandbox %s did not start within %s: %w", lang, t.Name(), startTimeout, sandbox.ErrUnavailable)
	}
}

// onFrame handles one frame from the kernel; an error breaks the stream.
func (k *kernel) onFrame(kind byte, payload []byte) error {
	c := k.current()
	switch kind {
	case frameStdout, frameStderr:
		if c != nil {
			c.out.Write(kind == frameStderr, payload)
		}
	case frameImage:
		return k.onImage(c, payload)
	case frameDone:
		var d kernelDone
		if err := json.Unmarshal(payload, &d); err != nil {
			return fmt.Errorf("kernel done frame: %w", err)
		}
		if c != nil && d.ID == c.id {
			c.finish(d)
		}
	case frameHello:
		var h kernelHello
		if err := json.Unmarshal(payload, &h); err != nil {
			return fmt.Errorf("kernel hello frame: %w", err)
		}
		select {
		case k.hello <- h:
		default:
		}
	case frameExit:
		var x struct{ Exit int }
		if err := json.Unmarshal(payload, &x); err != nil {
			return fmt.Errorf("kernel exit frame: %w", err)
		}
		k.mu.Lock()
		k.dead = true
		k.mu.Unlock()
		if c != nil {
			c.finish(kernelDone{Exit: x.Exit, exited: true})
		}
		k.in.close()
	default:
		return fmt.Errorf("unknown kernel frame type %q", kind)
	}
	return nil
}

// onImage keeps an image the run wrote; its payload is JSON, a newline, the bytes.
func (k *kernel) onImage(c *kernelCall, payload []byte) error {
	meta, data, ok := bytes.Cut(payload, []byte{'\n'})
	var img struct {
		Path, MIME, Skipped string
		Size                int64
	}
	if !ok || json.Unmarshal(meta, &img) != nil {
		return errors.New("malformed kernel image frame")
	}
	if c != nil {
		k.mu.Lock()
		c.images = append(c.images, sandbox.Image{Path: img.Path, MIME: img.MIME, Size: img.Size,
			Data: bytes.Clone(data), Skipped: img.Skipped})
		k.mu.Unlock()
	}
	return nil
}

func (k *kernel) current() *kernelCall {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.call
}

func (k *kernel) setCall(c *kernelCall) {
	k.mu.Lock()
	k.call = c
	k.mu.Unlock()
}

func (k *kernel) markDead() {
	k.mu.Lock()
	k.dead = true
	k.mu.Unlock()
}

func (k *kernel) isDead() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.dead
}

// lose ends the kernel after something went wrong with it: the run in
// progress ends with err, and closing its input makes the supervisor kill
// the interpreter and exit.
func (k *kernel) lose(err error) {
	k.markDead()
	if c := k.current(); c != nil {
		c.finish(kernelDone{Exit: -1, lost: err})
	}
	k.in.close()
}

// ended records the end of the kernel's exec.
func (k *kernel) ended(code int, err error, diag *run.CapBuffer) {
	if err == nil && code != 0 && code != kernelUnavailable {
		err = fmt.Errorf("exit code %d: %s", code, diag.String())
	}
	if err == nil {
		err = errKernelGone
	}
	k.exitCode, k.endErr = code, err
	k.lose(err)
	close(k.exited)
}

// send writes one frame to the kernel.
func (k *kernel) send(kind byte, payload []byte) error {
	return k.in.send(appendFrame(nil, kind, payload))
}

// kill ends the kernel: the supervisor kills the interpreter's process
// group and exits. If the exec has not ended within a grace, the engine
// kills both from outside and abandons the exec.
func (k *kernel) kill(ctx context.Context) {
	// Bounded: before Docker has attached the exec nobody takes the frame,
	// and kill must still reach the grace and the cancel below.
	_ = k.in.sendWithin(appendFrame(nil, frameKill, nil), Grace)
	k.in.close()
	select {
	case <-k.exited:
		return
	case <-time.After(Grace):
	}
	k.mu.Lock()
	pids := k.pids
	k.mu.Unlock()
	if pids.PID > 1 {
		// An install may have the sandbox online and start nothing else
		// there meanwhile (the kernel is stopped): the kill waits.
		_ = k.target.WaitExecs(context.WithoutCancel(ctx))
		// The caller's context is likely done (the kill ends a cancelled
		// run): only its values are kept.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), killTimeout)
		defer cancel()
		if _, err := k.set.docker.KillGroups(ctx, k.target.ID(), "", "", []int{pids.Child, pids.PID}); err != nil {
			k.set.log.Warn("kill kernel", "sandbox", k.target.Name(), "err", err)
		}
	}
	k.cancel()
	<-k.exited
}
