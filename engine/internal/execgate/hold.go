package execgate

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// The gate every process the engine starts in a sandbox passes: calls'
// execs, kernels, port forwards' relays, their spares and probes, the
// file tools' execs, the disk watch's kill, installs. All of them reach
// the runtime through this Runtime, the one every package gets, so the gate is
// there, once, and not in each caller. While an install has an offline
// sandbox online (from its freeze until it is offline again and what was
// stopped runs again), none starts in it but the install's own: each waits
// at the gate until the window closes, or gives up when its context ends
// (a relay after openTimeout: the client's connection is closed). And the
// freeze counts every process on its way in (ExecsIn), so that it can stop
// those that passed before the gate closed.

// startWait bounds how long a stream counts as starting: Docker starts an
// exec's process a moment after the stream is attached (see
// docker.ExecConn.Started).
const startWait = 10 * time.Second

// enter waits while an install holds container id's processes (Hold),
// unless ctx is that install's own (Holding), then counts an exec on its
// way in (ExecsIn); leave ends the count.
func (x *Runtime) enter(ctx context.Context, id string) (leave func(), err error) {
	return x.enterAs(ctx, id, x.running)
}

// enterSpawn is enter for a process of the session: it counts as starting
// (StartingIn) until started says it runs, or it failed to. The count is
// taken under the lock the hold is, so no process passes a freeze unseen.
func (x *Runtime) enterSpawn(ctx context.Context, id string) (started func(), err error) {
	return x.enterAs(ctx, id, x.starting)
}

func (x *Runtime) enterAs(ctx context.Context, id string, count map[string]int) (leave func(), err error) {
	for {
		x.mu.Lock()
		w := x.held[id]
		if w == nil || installOf(ctx, id) {
			count[id]++
			x.mu.Unlock()
			return sync.OnceFunc(func() {
				x.mu.Lock()
				if count[id]--; count[id] <= 0 {
					delete(count, id)
				}
				x.mu.Unlock()
			}), nil
		}
		x.waiting[id]++
		x.mu.Unlock()
		select {
		case <-w:
		case <-ctx.Done():
		}
		x.mu.Lock()
		if x.waiting[id]--; x.waiting[id] <= 0 {
			delete(x.waiting, id)
		}
		x.mu.Unlock()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("sandbox %s is installing packages with the network on (install_packages), and nothing else starts in it until the install ends; try again then: %w: %w",
				sandbox.ShortID(id), sandbox.ErrConflict, ctx.Err())
		}
	}
}

// holder marks the context of the install that holds a container.
type holder struct{}

// Holding marks ctx as the context of the install that holds container id
// (see Hold): its processes pass the gate.
func Holding(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, holder{}, id)
}

// installOf reports whether ctx is the context of the install that holds
// container id (see Holding).
func installOf(ctx context.Context, id string) bool {
	held, _ := ctx.Value(holder{}).(string)
	return held != "" && held == id
}

// Hold keeps every new process out of container id but the install's
// own (see enter) until release.
func (x *Runtime) Hold(id string) (release func()) {
	w := make(chan struct{})
	x.mu.Lock()
	x.held[id] = w
	x.mu.Unlock()
	return sync.OnceFunc(func() {
		x.mu.Lock()
		delete(x.held, id)
		x.mu.Unlock()
		close(w)
	})
}

// Wait waits until nothing holds container id's processes (but for the
// install whose ctx it is: it holds them itself), or for ctx; it counts as
// waiting at the gate meanwhile (WaitingIn).
func (x *Runtime) Wait(ctx context.Context, id string) error {
	if installOf(ctx, id) {
		return nil
	}
	x.mu.Lock()
	w := x.held[id]
	if w == nil {
		x.mu.Unlock()
		return nil
	}
	x.waiting[id]++
	x.mu.Unlock()
	defer func() {
		x.mu.Lock()
		if x.waiting[id]--; x.waiting[id] <= 0 {
			delete(x.waiting, id)
		}
		x.mu.Unlock()
	}()
	select {
	case <-w:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// WaitingIn counts the processes waiting at container id's gate.
func (x *Runtime) WaitingIn(id string) int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.waiting[id]
}

// ExecStream starts a relay's process through the gate. It returns once
// the stream is attached, as Docker's does, and the process counts as on
// its way in until Docker has started it (at most startWait): a goroutine
// of its own waits for that, so the relay's bytes do not.
func (x *Runtime) ExecStream(ctx context.Context, id, user string, cmd []string) (runtime.ExecConn, error) {
	leave, err := x.enter(ctx, id)
	if err != nil {
		return nil, err
	}
	x.mu.Lock()
	x.starting[id]++
	x.mu.Unlock()
	started := func() {
		x.mu.Lock()
		if x.starting[id]--; x.starting[id] <= 0 {
			delete(x.starting, id)
		}
		x.mu.Unlock()
		leave()
	}
	c, err := x.Full.ExecStream(ctx, id, user, cmd)
	if err != nil {
		started()
		return nil, err
	}
	go func() {
		defer started()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), startWait)
		defer cancel()
		_ = c.Started(sctx) // a process that never starts reads nothing: its stream ends
	}()
	return c, nil
}

// StatPath, CopyTo, CopyFrom and UserIDs may exec the image's stat or tar
// (for paths on a tmpfs, see docker.Client), so they pass the gate too.

func (x *Runtime) StatPath(ctx context.Context, id, path string) (runtime.PathStat, error) {
	leave, err := x.enter(ctx, id)
	if err != nil {
		return runtime.PathStat{}, err
	}
	defer leave()
	return x.Full.StatPath(ctx, id, path)
}

func (x *Runtime) CopyTo(ctx context.Context, id, dstDir string, tarStream io.Reader) error {
	leave, err := x.enter(ctx, id)
	if err != nil {
		return err
	}
	defer leave()
	return x.Full.CopyTo(ctx, id, dstDir, tarStream)
}

func (x *Runtime) CopyFrom(ctx context.Context, id, path string) (io.ReadCloser, runtime.PathStat, error) {
	leave, err := x.enter(ctx, id)
	if err != nil {
		return nil, runtime.PathStat{}, err
	}
	defer leave()
	return x.Full.CopyFrom(ctx, id, path)
}

func (x *Runtime) UserIDs(ctx context.Context, id, user string) (uid, gid int, err error) {
	leave, err := x.enter(ctx, id)
	if err != nil {
		return 0, 0, err
	}
	defer leave()
	return x.Full.UserIDs(ctx, id, user)
}
