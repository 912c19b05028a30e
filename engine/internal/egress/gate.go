package egress

import (
	"context"
	"crypto/x509"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/internal/egress/hostrule"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// HostAlias is the name through which a sandbox reaches the host's
// 127.0.0.1, on the ports of Options.HostPorts only.
const HostAlias = "host.sandtray.internal"

// DefaultAllow are the package indexes install_packages uses: what an
// egress sandbox may reach when the config sets no [egress] allow.
var DefaultAllow = []string{
	"deb.debian.org", "security.debian.org",
	"archive.ubuntu.com", "security.ubuntu.com", "ports.ubuntu.com",
	"pypi.org", "files.pythonhosted.org",
	"registry.npmjs.org",
	"dl-cdn.alpinelinux.org",
}

// Resolver looks a name up; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure a Gate: the [egress] keys, and where it resolves,
// dials and records.
type Options struct {
	// Allow are the config's allow patterns; nil means DefaultAllow.
	Allow, Deny []string
	Ask         bool
	AskTimeout  time.Duration // 0: 60 s
	HostPorts   []int         // ports of the host's 127.0.0.1 reachable as HostAlias
	Resolver    Resolver      // nil: net.DefaultResolver
	// Dial connects to a checked address; nil: a net.Dialer with a 10 s timeout.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// RecordFile is the JSON-lines file every decision is appended to
	// (rotated at RecordMax, one older file kept); "" keeps none.
	RecordFile string
	RecordMax  int64 // 0: 16 MiB
	// GlobalFile keeps the approvals for every sandbox ("always"); ""
	// keeps them in memory only.
	GlobalFile string
	Log        *slog.Logger
	// OnRecord, when set, hears of each decision as it is recorded
	// (outside any lock of the gate's): the engine's activity log.
	OnRecord func(Record)
	// OnChange, when set, hears (outside any lock of the gate's) that
	// pending requests, rules or records changed.
	OnChange func()
	// Secrets are swapped for their sandboxes' placeholders in requests
	// to their hosts (secrets.go); they need CA.
	Secrets []Secret
	// CA signs the certificates the gate shows a sandbox for the hosts a
	// secret is bound to (LoadOrCreateCA constrains it to them); nil: the
	// gate terminates no TLS and swaps secrets in plain HTTP only.
	CA *CA
	// UpstreamRoots check the certificates of the hosts whose TLS the
	// gate terminates; nil: the system's roots.
	UpstreamRoots *x509.CertPool
}

// Sandbox is one sandbox as the gate knows it.
type Sandbox struct {
	ID, Name string
	Client   string // the MCP client that made it, for records and asks
	// Offline marks a sandbox of network "none": it reaches nothing but
	// what a Grant allows (an install's package hosts), and is never asked
	// about.
	Offline bool
	Rules   SandboxRules // its approvals so far
	// Save, when set, keeps the sandbox's rules when they change (the
	// engine's state dir, so a persistent sandbox keeps them).
	Save func(SandboxRules)
	// Placeholders are the sandbox's stand-ins for the secrets (secret
	// name → placeholder), as its environment holds them.
	Placeholders map[string]string
}

// SandboxRules are the rules the user gave one sandbox.
type SandboxRules = sandbox.EgressRules

// Gate decides and carries sandboxes' connections. Create it with New;
// Close ends it. It is safe for concurrent use.
type Gate struct {
	o        Options
	resolver Resolver
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	log      *slog.Logger
	rec      *recorder
	srv      *server // proxy.go
	secrets  []*secret
	bodies   budget // request bodies held whole to swap secrets in (body.go)

	mu      sync.Mutex
	allow   []hostrule.Rule // the config's, or the defaults
	deny    []hostrule.Rule
	global  []hostrule.Rule // approvals for every sandbox
	boxes   map[string]*box
	pending map[string]*pending // by id (ask.go)
	seq     uint64
	watch   map[chan struct{}]struct{}
	closed  bool
	// tunnels are the open CONNECT tunnels' upstream connections, which
	// Close ends; owed counts the records still to come (a tunnel's when
	// it ends, a plain request's when its answer is through), which Close
	// waits for. Added to only while the gate is open.
	tunnels map[*countConn]struct{}
	owed    sync.WaitGroup
}

// box is the gate's record of one sandbox; guarded by Gate.mu.
type box struct {
	Sandbox
	allow, deny []hostrule.Rule
	grants      []grant
	recent      []Record              // newest last, at most recentKept
	hosts       map[string]*hostEntry // at most hostsKept (record.go)
	seen        uint64                // the clock of hosts' last records
	transport   *http.Transport       // plain HTTP's upstream connections, this sandbox's alone
	conns       map[*boxConn]struct{}
	phs         []placeholder // its secrets' placeholders (secrets.go)
}

// grant is a rule for a while: an install's package hosts, or a pending
// request the user allowed once.
type grant struct {
	rule  hostrule.Rule
	until time.Time // zero: until revoked
	id    uint64
}

// New returns a gate under o's rules. Bad patterns are an error naming the key.
func New(o Options) (*Gate, error) {
	if o.AskTimeout <= 0 {
		o.AskTimeout = 60 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	allowPatterns, source := o.Allow, hostrule.SourceConfig
	if allowPatterns == nil {
		allowPatterns, source = DefaultAllow, hostrule.SourceDefault
	}
	allow, err := hostrule.ParseList("egress.allow", allowPatterns, source)
	if err != nil {
		return nil, err
	}
	deny, err := hostrule.ParseList("egress.deny", o.Deny, hostrule.SourceConfig)
	if err != nil {
		return nil, err
	}
	secrets, err := parseSecrets(o.Secrets)
	if err != nil {
		return nil, err
	}
	g := &Gate{o: o, resolver: o.Resolver, dial: o.Dial, log: o.Log, allow: allow, deny: deny, secrets: secrets, bodies: budget{max: swapBudget},
		boxes: map[string]*box{}, pending: map[string]*pending{}, watch: map[chan struct{}]struct{}{}, tunnels: map[*countConn]struct{}{}}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	if g.dial == nil {
		d := &net.Dialer{Timeout: 10 * time.Second}
		g.dial = d.DialContext
	}
	if g.global, err = loadGlobal(o.GlobalFile); err != nil {
		g.log.Warn("egress: read the global approvals", "file", o.GlobalFile, "err", err)
	}
	g.rec = newRecorder(o.RecordFile, o.RecordMax)
	g.srv = newServer(g)
	return g, nil
}

// closeWait bounds how long Close waits for the records of what it ended.
const closeWait = 5 * time.Second

// Close ends every connection and refuses new ones; pending requests are
// denied. It returns once the records of the connections it ended are
// written (or after closeWait), and the record file is not written after.
func (g *Gate) Close() error {
	g.mu.Lock()
	g.closed = true
	var boxes []*box
	for _, b := range g.boxes {
		boxes = append(boxes, b)
	}
	g.boxes = map[string]*box{}
	for _, p := range g.pending {
		p.finish(answerResult{why: "Sandtray is shutting down"})
	}
	g.pending = map[string]*pending{}
	tunnels := slices.Collect(maps.Keys(g.tunnels))
	g.mu.Unlock()
	for _, b := range boxes {
		b.end()
	}
	g.srv.close()
	for _, c := range tunnels {
		c.Close()
	}
	owed := make(chan struct{})
	go func() { g.owed.Wait(); close(owed) }()
	select {
	case <-owed:
	case <-time.After(closeWait):
		g.log.Warn("egress: closed without the records of connections that did not end", "waited", closeWait)
	}
	g.rec.close()
	g.changed()
	return nil
}

// owe counts one record still to come, unless the gate is closed.
func (g *Gate) owe() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.owed.Add(1)
	return true
}

// openTunnel counts tunnel c's record as owed and has Close end it; false
// if the gate is closed.
func (g *Gate) openTunnel(c *countConn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.owed.Add(1)
	g.tunnels[c] = struct{}{}
	return true
}

// tunnelDone is tunnel c's record written.
func (g *Gate) tunnelDone(c *countConn) {
	g.mu.Lock()
	delete(g.tunnels, c)
	g.mu.Unlock()
	g.owed.Done()
}

// Register makes s known to the gate (again: its rules and mode are
// replaced, its records kept). Connections of unknown sandboxes are refused.
func (g *Gate) Register(s Sandbox) error {
	allow, err := hostrule.ParseList("allow", s.Rules.Allow, hostrule.SourceSandbox)
	if err != nil {
		return err
	}
	deny, err := hostrule.ParseList("deny", s.Rules.Deny, hostrule.SourceSandbox)
	if err != nil {
		return err
	}
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return fmt.Errorf("the egress gate is closed: %w", sandbox.ErrUnavailable)
	}
	b := g.boxes[s.ID]
	if b == nil {
		b = &box{hosts: map[string]*hostEntry{}, conns: map[*boxConn]struct{}{}, transport: g.transport()}
		g.boxes[s.ID] = b
	}
	b.Sandbox, b.allow, b.deny = s, allow, deny
	b.phs = placeholdersOf(g.secrets, s.Placeholders)
	g.mu.Unlock()
	g.changed()
	return nil
}

// Registered reports whether sandbox id is known to the gate.
func (g *Gate) Registered(id string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.boxes[id]
	return ok
}

// Unregister forgets sandbox id: its connections end, its pending
// requests are denied, its grants dropped.
func (g *Gate) Unregister(id string) {
	g.mu.Lock()
	b := g.boxes[id]
	delete(g.boxes, id)
	for pid, p := range g.pending {
		if p.SandboxID == id {
			p.finish(answerResult{why: "the sandbox stopped"})
			delete(g.pending, pid)
		}
	}
	g.mu.Unlock()
	if b != nil {
		b.end()
	}
	g.changed()
}

// end closes b's connections.
func (b *box) end() {
	for c := range b.conns {
		c.end()
	}
	b.transport.CloseIdleConnections()
}

// Grant allows sandbox id the patterns (with source, e.g. hostrule.SourceInstall)
// until revoke is called: an install's package hosts for that call. An
// unknown sandbox is an error.
func (g *Gate) Grant(id string, patterns []string, source string) (revoke func(), err error) {
	rules, err := hostrule.ParseList("grant", patterns, source)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	b := g.boxes[id]
	if b == nil {
		g.mu.Unlock()
		return nil, fmt.Errorf("sandbox %s is not known to the egress gate: %w", id, sandbox.ErrNotFound)
	}
	g.seq++
	gid := g.seq
	for _, r := range rules {
		b.grants = append(b.grants, grant{rule: r, id: gid})
	}
	g.mu.Unlock()
	return sync.OnceFunc(func() {
		g.mu.Lock()
		if b := g.boxes[id]; b != nil {
			b.grants = slices.DeleteFunc(b.grants, func(gr grant) bool { return gr.id == gid })
		}
		g.mu.Unlock()
	}), nil
}

// AskTimeout is how long a connection no rule matches waits for the user.
func (g *Gate) AskTimeout() time.Duration { return g.o.AskTimeout }

// Watch returns a channel that receives (coalesced) whenever pending
// requests, rules or records change, until stop is called.
func (g *Gate) Watch() (ch <-chan struct{}, stop func()) {
	c := make(chan struct{}, 1)
	g.mu.Lock()
	g.watch[c] = struct{}{}
	g.mu.Unlock()
	return c, sync.OnceFunc(func() {
		g.mu.Lock()
		delete(g.watch, c)
		g.mu.Unlock()
	})
}

// changed tells the watchers and OnChange; never called under g.mu.
func (g *Gate) changed() {
	g.mu.Lock()
	for c := range g.watch {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	g.mu.Unlock()
	if g.o.OnChange != nil {
		g.o.OnChange()
	}
}
