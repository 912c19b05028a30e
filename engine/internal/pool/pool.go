package pool

import (
	"context"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Prefix starts the container name of a pooled container. A sandbox is
// named with the engine's prefix plus a name that begins with a letter or a
// digit, so no sandbox can ever carry this prefix.
const Prefix = "sandtray_pool-"

// Kernel is the language whose kernel every pooled container starts ahead
// of time: execute_code's default. The first result of a sandbox taken from
// the pool then skips the kernel's start, and the interpreter's first start
// in a new container, which is the slow one (with the fuse-overlayfs storage
// driver, for one, each container reads the image's files through a mount
// of its own, with a cold cache). Kernels are keyed by container id, which
// the hand-out keeps.
const Kernel = "python"

// Docker is what the pool needs from Docker.
type Docker interface {
	Create(ctx context.Context, o runtime.CreateOptions) (string, error)
	Start(ctx context.Context, id string) error
	Rename(ctx context.Context, id, name string) error
	List(ctx context.Context, labels map[string]string, all bool) ([]runtime.Container, error)
	Remove(ctx context.Context, id string) error
	UpdateLimits(ctx context.Context, id string, memoryMB, milliCPUs int64) error
	InspectImage(ctx context.Context, ref string) (runtime.Image, error)
	ImageEvents(ctx context.Context) (<-chan runtime.ImageEvent, <-chan error)
	Stats(ctx context.Context, id string) (runtime.StatsSample, error)
}

// Kernels is the engine's kernels (kernel.Set) as the pool warms a
// spare's and ends them.
type Kernels interface {
	// Warm starts the kernel for lang in the container h; an image that
	// cannot run one fails with kernel.ErrUnavailable.
	Warm(ctx context.Context, h sandbox.Handle, lang string) error
	// Close ends what is kept about container id (its kernels).
	Close(id string)
}

// Config is the pool's budget. Every image in Images, and every other image
// a sandbox was created from within Idle, keeps Size spares, more after a
// burst (as many as were created within a minute, in the last Idle); all
// spares together stay within MaxTotal containers and MemoryMB of memory,
// as measured. Parallel fills run at once. SandboxName is the container
// name a hand-out renames a spare to, for its sandbox name; Scope selects
// the engine's containers (its identity among them: another engine's spares
// are never the pool's). Spec and Container make a spare as the engine
// makes a sandbox, from its configuration.
type Config struct {
	Size        int
	Images      []string
	MaxTotal    int
	MemoryMB    int64
	Idle        time.Duration
	Parallel    int
	SandboxName func(name string) string
	Scope       map[string]string
	// Spec is the spec a spare of image is made with: the defaults, with
	// no name. An image the engine cannot pool fails.
	Spec func(image string) (sandbox.Spec, error)
	// Container is the hardened container of spec named name (its
	// hostname too), with the labels of a sandbox made at created.
	Container func(name string, spec sandbox.Spec, created time.Time) (runtime.CreateOptions, error)
}

// pooled is one ready container of the pool.
type pooled struct {
	id      string
	name    string // generated at fill time; also its hostname
	image   string
	imageID string // the image the reference named when it was made
	spec    sandbox.Spec
}

// Pool holds the ready containers and learns which images to keep them
// for. Its lock is never held across a Docker call: taking is a slice pop,
// so a create never waits for a fill.
type Pool struct {
	instance string // LabelPool value of this engine's containers
	cfg      Config
	docker   Docker
	kernels  Kernels
	changed  func()
	log      *slog.Logger
	now      func() time.Time
	kick     chan struct{} // buffer of one: a coalesced replan request
	work     sync.WaitGroup

	// mu guards the fields below; it is a leaf lock (nothing else is taken
	// while it is held).
	mu       sync.Mutex
	images   map[string]*imageState
	closed   bool
	lastTake time.Time
}

// New returns a pool for cfg, or nil when cfg.Size or cfg.MaxTotal is 0. It
// makes spares through d, warms their kernels in kernels, and calls changed
// (which must not block) when what it holds changed, for the GUI.
func New(cfg Config, d Docker, kernels Kernels, changed func(), log *slog.Logger) *Pool {
	if cfg.Size <= 0 || cfg.MaxTotal <= 0 {
		return nil
	}
	cfg.Parallel = max(cfg.Parallel, 1)
	p := &Pool{instance: sandbox.RandomHex(6), cfg: cfg, docker: d, kernels: kernels, changed: changed, log: log, now: time.Now,
		kick: make(chan struct{}, 1), images: map[string]*imageState{}}
	for _, img := range cfg.Images {
		p.state(img).configured = true
	}
	return p
}

// state returns the record of image, making it. Callers hold p.mu.
func (p *Pool) state(image string) *imageState {
	s, ok := p.images[image]
	if !ok {
		s = &imageState{}
		p.images[image] = s
	}
	return s
}

// Adjustable reports whether a container created with base can serve want,
// given that the hand-out changes its memory and CPU limits in place and
// the engine passes env to every process it starts in the sandbox. Name,
// language and persistence never matter: the name is applied by the rename
// and the other two live in the engine's state file.
func Adjustable(base, want sandbox.Spec) bool {
	want.Name, want.Language, want.Persistent = base.Name, base.Language, base.Persistent
	want.Env, want.MemoryMB, want.CPUs = base.Env, base.MemoryMB, base.CPUs
	return reflect.DeepEqual(base, want)
}

// refill asks the pool loop to replan; it never blocks.
func (p *Pool) refill() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// Ready reports how many warm containers are ready, and how many the pool
// means to hold now. A nil pool has none.
func (p *Pool) Ready() (ready, size int) {
	if p == nil {
		return 0, 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	alloc := p.allocate(p.now())
	for img, s := range p.images {
		ready += len(s.ready)
		size += alloc[img]
	}
	return ready, size
}

// IDs lists the containers ready in the pool now.
func (p *Pool) IDs() []string {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var ids []string
	for _, s := range p.images {
		for _, c := range s.ready {
			ids = append(ids, c.id)
		}
	}
	return ids
}

// IsLeftover reports whether c is a pooled container never handed out that
// carries every label of scope ("" only asks for the key): with an engine's
// scope, one of that engine's spares, never another engine's, which may be
// in use.
func IsLeftover(c runtime.Container, scope map[string]string) bool {
	for k, v := range scope {
		if got, ok := c.Labels[k]; !ok || (v != "" && got != v) {
			return false
		}
	}
	return c.Labels[sandbox.LabelPool] != "" && strings.HasPrefix(c.Name, Prefix)
}
