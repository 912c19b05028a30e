package egress

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/internal/egress/hostrule"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/atomicfile"
)

// Record is one decision of the gate, as the JSON-lines record holds it.
type Record = sandbox.EgressRecord

// Decisions a Record holds.
const (
	DecisionAllow = "allow"
	DecisionDeny  = "deny"
)

// recentKept is how many records each sandbox keeps in memory.
const recentKept = 200

// hostsKept bounds each sandbox's table of the hosts it reached or tried
// (F63): a new host past it takes the place of the one whose last record is
// oldest.
const hostsKept = 500

// hostEntry is one host of a sandbox's table, with when it was last
// recorded (the box's seen clock).
type hostEntry struct {
	HostStats
	seen uint64
}

// recorder appends records to a JSON-lines file, rotated at max bytes to
// path+".1" (the one older file kept), so it takes at most twice max.
type recorder struct {
	mu     sync.Mutex
	path   string
	max    int64
	closed bool // the gate is closed: nothing more is written
}

// close makes every later append a no-op.
func (r *recorder) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
}

func newRecorder(path string, max int64) *recorder {
	if max <= 0 {
		max = 16 << 20
	}
	return &recorder{path: path, max: max}
}

func (r *recorder) append(rec Record) error {
	if r.path == "" {
		return nil
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	if st, err := os.Stat(r.path); err == nil && st.Size()+int64(len(b)) > r.max {
		if err := os.Rename(r.path, r.path+".1"); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(r.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// record keeps rec in its sandbox's recent list and host sums, appends it
// to the file, and tells the watchers.
func (g *Gate) record(rec Record) {
	if rec.Time.IsZero() {
		rec.Time = time.Now().UTC()
	}
	g.mu.Lock()
	if b := g.boxes[rec.SandboxID]; b != nil {
		if rec.Sandbox == "" {
			rec.Sandbox, rec.Client = b.Name, b.Client
		}
		b.recent = append(b.recent, rec)
		if len(b.recent) > recentKept {
			b.recent = append(b.recent[:0:0], b.recent[len(b.recent)-recentKept:]...)
		}
		h := b.hosts[rec.Host]
		if h == nil {
			if len(b.hosts) >= hostsKept {
				b.forgetOldestHost()
			}
			h = &hostEntry{HostStats: HostStats{Host: rec.Host}}
			b.hosts[rec.Host] = h
		}
		b.seen++
		h.seen = b.seen
		if rec.Decision == DecisionAllow {
			h.Allowed++
		} else {
			h.Denied++
		}
		h.BytesUp += rec.BytesUp
		h.BytesDown += rec.BytesDown
		h.Last, h.LastRule = rec.Decision, rec.Rule
	}
	onRecord := g.o.OnRecord
	g.mu.Unlock()
	if err := g.rec.append(rec); err != nil {
		g.log.Warn("egress: write the record", "file", g.rec.path, "err", err)
	}
	if onRecord != nil {
		onRecord(rec)
	}
	g.changed()
}

// forgetOldestHost drops the host whose last record is oldest. Called
// under Gate.mu.
func (b *box) forgetOldestHost() {
	var oldest *hostEntry
	for _, h := range b.hosts {
		if oldest == nil || h.seen < oldest.seen {
			oldest = h
		}
	}
	if oldest != nil {
		delete(b.hosts, oldest.Host)
	}
}

func sortHosts(h []HostStats) {
	slices.SortFunc(h, func(a, b HostStats) int { return strings.Compare(a.Host, b.Host) })
}

func globalPatterns(rules []hostrule.Rule) []string {
	out := make([]string, 0, len(rules))
	for _, r := range rules {
		out = append(out, r.String())
	}
	return out
}

// globalFile is what GlobalFile holds.
type globalFile struct {
	Allow []string `json:"allow"`
}

// loadGlobal reads the approvals for every sandbox; a missing file is none.
func loadGlobal(path string) ([]hostrule.Rule, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f globalFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	return hostrule.ParseList("allow", f.Allow, hostrule.SourceGlobal)
}

func saveGlobal(path string, patterns []string) error {
	if path == "" {
		return nil
	}
	if patterns == nil {
		patterns = []string{}
	}
	b, err := json.MarshalIndent(globalFile{Allow: patterns}, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'), 0o600)
}
