package fakeruntime

import (
	"context"
	"fmt"
	goruntime "runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Host is the endpoint every client of a fake daemon reports.
const Host = "fake://sandtray"

// Product is the daemon's product name (runtime.DaemonInfo.Product): not
// Docker's own engine, so the engine never attaches to a container.
const Product = "Sandtray fake runtime"

// Runtime is one client of a fake daemon; it implements runtime.Runtime
// and is safe for concurrent use.
type Runtime struct {
	d      *daemon
	closed atomic.Bool
	name   atomic.Pointer[string]
}

// The fake is a runtime with images, pause, networks, layer disk, renames,
// limit updates, GPUs (none) and export; it cannot commit, diff, build or
// attach, so it is also what the engine does on such a runtime.
var (
	_ runtime.Runtime      = (*Runtime)(nil)
	_ runtime.Imager       = (*Runtime)(nil)
	_ runtime.Pauser       = (*Runtime)(nil)
	_ runtime.Networker    = (*Runtime)(nil)
	_ runtime.LayerDisker  = (*Runtime)(nil)
	_ runtime.Renamer      = (*Runtime)(nil)
	_ runtime.LimitUpdater = (*Runtime)(nil)
	_ runtime.GPUProvider  = (*Runtime)(nil)
	_ runtime.Exporter     = (*Runtime)(nil)
)

// Name is the fake's runtime name, "fake" (see SetName).
func (r *Runtime) Name() string {
	if n := r.name.Load(); n != nil {
		return *n
	}
	return "fake"
}

// SetName changes the name this client reports (a test registering the
// fake as a runtime of another name).
func (r *Runtime) SetName(name string) { r.name.Store(&name) }

// daemon is the state the clients of one fake daemon share.
type daemon struct {
	mu         sync.Mutex
	containers map[string]*container // by id
	images     map[string]*image     // by id
	tags       map[string]string     // normalized ref → image id
	pullable   map[string]imageSpec  // normalized ref → what a pull fetches
	handler    Handler
	subs       map[*subscriber]struct{}
	imageSubs  map[*subscriber]struct{}
	calls      map[string]int
	down       bool
	pullLimit  int64
}

// New makes a fake daemon with no containers and no images, and returns a
// client of it.
func New() *Runtime {
	return &Runtime{d: &daemon{
		containers: map[string]*container{}, images: map[string]*image{}, tags: map[string]string{},
		pullable: map[string]imageSpec{}, subs: map[*subscriber]struct{}{}, imageSubs: map[*subscriber]struct{}{},
		calls: map[string]int{},
	}}
}

// Connect returns another client of r's daemon: what a second engine on the
// same daemon uses (its Close leaves r working).
func (r *Runtime) Connect() *Runtime { return &Runtime{d: r.d} }

// SetHandler installs the handler of the processes Exec and ExecStream
// start, after the engine's own commands (see Proc); nil leaves them to
// Builtin.
func (r *Runtime) SetHandler(h Handler) {
	r.d.mu.Lock()
	r.d.handler = h
	r.d.mu.Unlock()
}

// SetDown makes the daemon stop answering (down: every call fails with
// sandbox.ErrUnavailable and the event streams break) or answer again.
func (r *Runtime) SetDown(down bool) {
	r.d.mu.Lock()
	r.d.down = down
	var subs []*subscriber
	if down {
		for s := range r.d.subs {
			subs = append(subs, s)
		}
		for s := range r.d.imageSubs {
			subs = append(subs, s)
		}
	}
	r.d.mu.Unlock()
	for _, s := range subs {
		s.fail(fmt.Errorf("watch events: the daemon closed the stream: %w", sandbox.ErrUnavailable))
	}
}

// Calls counts the calls of method (e.g. "Create", "Exec") made on the
// daemon so far, by any client.
func (r *Runtime) Calls(method string) int {
	r.d.mu.Lock()
	defer r.d.mu.Unlock()
	return r.d.calls[method]
}

// PullLimit is the bound SetPullLimit set last.
func (r *Runtime) PullLimit() int64 {
	r.d.mu.Lock()
	defer r.d.mu.Unlock()
	return r.d.pullLimit
}

// lock counts a call of method and takes the daemon's lock, or fails as an
// unreachable daemon does: the caller unlocks when err is nil.
func (r *Runtime) lock(ctx context.Context, method string) error {
	if ctx != nil && ctx.Err() != nil {
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
	if r.closed.Load() {
		return fmt.Errorf("%s: the client is closed: %w", method, sandbox.ErrUnavailable)
	}
	r.d.mu.Lock()
	r.d.calls[method]++
	if r.d.down {
		r.d.mu.Unlock()
		return fmt.Errorf("%s: cannot connect to the fake daemon: %w", method, sandbox.ErrUnavailable)
	}
	return nil
}

func (r *Runtime) unlock() { r.d.mu.Unlock() }

// newID is a fresh random 64-hex-digit id, as Docker's are. Callers hold
// d.mu.
func (d *daemon) newID() string {
	return sandbox.RandomHex(32)
}

// Close ends this client: its later calls fail with sandbox.ErrUnavailable.
// The daemon and its other clients go on.
func (r *Runtime) Close() error {
	r.closed.Store(true)
	return nil
}

// Closed reports whether Close was called on this client.
func (r *Runtime) Closed() bool { return r.closed.Load() }

// Endpoint is where the fake is: Host.
func (r *Runtime) Endpoint() runtime.Endpoint {
	return runtime.Endpoint{Host: Host, Source: "fakeruntime", Why: "set explicitly"}
}

// Host and HostSource are what the engine's status shows.
func (r *Runtime) Host() string       { return Host }
func (r *Runtime) HostSource() string { return "fakeruntime: set explicitly" }

// ServerVersion describes the fake daemon.
func (r *Runtime) ServerVersion(ctx context.Context) (string, error) {
	if err := r.lock(ctx, "ServerVersion"); err != nil {
		return "", err
	}
	defer r.unlock()
	return "fake 1.0 (API 1.41)", nil
}

// Daemon describes the fake daemon: not Docker's own engine (Product).
func (r *Runtime) Daemon(ctx context.Context) (runtime.DaemonInfo, error) {
	if err := r.lock(ctx, "Daemon"); err != nil {
		return runtime.DaemonInfo{}, err
	}
	defer r.unlock()
	return runtime.DaemonInfo{Version: "1.0", API: "1.41", Product: Product, StorageDriver: "memory", Runtimes: []string{"runc"}}, nil
}

// Platform is this machine's architecture, on Linux.
func (r *Runtime) Platform(ctx context.Context) (string, string, error) {
	if err := r.lock(ctx, "Platform"); err != nil {
		return "", "", err
	}
	defer r.unlock()
	return "linux", goruntime.GOARCH, nil
}

// GPUSupport reports no GPUs.
func (r *Runtime) GPUSupport(ctx context.Context) (runtime.GPUSupport, error) {
	if err := r.lock(ctx, "GPUSupport"); err != nil {
		return runtime.GPUSupport{}, err
	}
	defer r.unlock()
	return runtime.GPUSupport{Detail: "the fake runtime has no GPUs"}, nil
}

// SetPullLimit records the bound (see PullLimit); the fake's pulls are
// of no size.
func (r *Runtime) SetPullLimit(bytes int64) {
	r.d.mu.Lock()
	r.d.pullLimit = max(bytes, 0)
	r.d.mu.Unlock()
}

// unsupported is the error of what the fake cannot do.
func unsupported(op string) error {
	return fmt.Errorf("%s: not in the fake runtime: %w", op, sandbox.ErrUnsupported)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
