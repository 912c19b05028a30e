package ui

import (
	"slices"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// historyWindow is how far back the resource charts reach.
const historyWindow = 5 * time.Minute

// sample is one point of a sandbox's resource history.
type sample struct {
	at  time.Time
	cpu float64
	mem uint64
}

// statusFilters are the choices of the status filter, "All" first.
var statusFilters = []string{"All", "Running", "Stopped", "Paused", "Missing"}

// model is the window's state in plain Go: the latest snapshot, the filter,
// the selection and the resource history. It holds no widgets, so it can be
// tested without a display; the view renders from it.
type model struct {
	snap     sandbox.Snapshot
	query    string // lower-cased text filter
	status   string // one of statusFilters
	selected string // sandbox id, "" for none
	visible  []sandbox.Info
	history  map[string][]sample
	lastSeq  uint64
	sortCol  string // a list column's title; "" is defaultSort (sort.go)
	sortDesc bool   // the other way round
}

func newModel() *model {
	return &model{status: statusFilters[0], history: map[string][]sample{}}
}

// apply takes a new snapshot and returns the notices not seen before.
func (m *model) apply(s sandbox.Snapshot) []sandbox.Notice {
	m.snap = s
	m.record(s)
	m.refilter()
	var fresh []sandbox.Notice
	for _, n := range s.Notices {
		if n.Seq > m.lastSeq {
			fresh = append(fresh, n)
		}
	}
	if len(fresh) > 0 {
		m.lastSeq = fresh[len(fresh)-1].Seq
	}
	return fresh
}

// record appends each running sandbox's stats to its history and drops the
// history of sandboxes that are gone and of samples older than the window.
func (m *model) record(s sandbox.Snapshot) {
	at := s.Time
	if at.IsZero() {
		at = time.Now()
	}
	live := map[string]bool{}
	for _, info := range s.Sandboxes {
		live[info.ID] = true
		h := m.history[info.ID]
		if n := len(h); n > 0 && !at.After(h[n-1].at) {
			continue // a snapshot for some other change in the same instant
		}
		h = append(h, sample{at: at, cpu: info.Stats.CPUPercent, mem: info.Stats.MemoryBytes})
		cut := 0
		for cut < len(h) && at.Sub(h[cut].at) > historyWindow {
			cut++
		}
		m.history[info.ID] = h[cut:]
	}
	for id := range m.history {
		if !live[id] {
			delete(m.history, id)
		}
	}
}

// setQuery sets the text filter.
func (m *model) setQuery(q string) {
	m.query = strings.ToLower(strings.TrimSpace(q))
	m.refilter()
}

// setStatus sets the status filter to one of statusFilters.
func (m *model) setStatus(s string) {
	if s == "" {
		s = statusFilters[0]
	}
	m.status = s
	m.refilter()
}

func (m *model) refilter() {
	m.visible = m.visible[:0]
	for _, info := range m.snap.Sandboxes {
		if m.matches(info) {
			m.visible = append(m.visible, info)
		}
	}
	slices.SortStableFunc(m.visible, m.compare)
}

func (m *model) matches(info sandbox.Info) bool {
	if m.status != statusFilters[0] && StatusText(info.Status) != m.status {
		return false
	}
	if m.query == "" {
		return true
	}
	fields := []string{info.Name, info.Image, info.ID, info.Owner.Client, info.Owner.Session, string(info.Status)}
	for _, p := range info.Ports {
		fields = append(fields, p.URL)
	}
	for _, field := range fields {
		if strings.Contains(strings.ToLower(field), m.query) {
			return true
		}
	}
	return false
}

// find returns the sandbox with the given id in the latest snapshot.
func (m *model) find(id string) (sandbox.Info, bool) {
	for _, info := range m.snap.Sandboxes {
		if info.ID == id {
			return info, true
		}
	}
	return sandbox.Info{}, false
}

// current returns the selected sandbox, if it is still there.
func (m *model) current() (sandbox.Info, bool) {
	if m.selected == "" {
		return sandbox.Info{}, false
	}
	return m.find(m.selected)
}

// indexOf returns the row of a sandbox among the visible ones, or -1.
func (m *model) indexOf(id string) int {
	for i, info := range m.visible {
		if info.ID == id {
			return i
		}
	}
	return -1
}

// running counts running sandboxes, for the tray.
func (m *model) running() int {
	n := 0
	for _, info := range m.snap.Sandboxes {
		if info.Status == sandbox.StatusRunning {
			n++
		}
	}
	return n
}

// samples returns the resource history of a sandbox, oldest first.
func (m *model) samples(id string) []sample {
	return m.history[id]
}
