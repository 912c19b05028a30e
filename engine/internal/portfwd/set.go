package portfwd

import (
	"cmp"
	"slices"
	"sync"
)

// Set holds the live forwards of every sandbox, one per sandbox port. It is
// safe for concurrent use.
type Set struct {
	mu sync.Mutex // guards byBox; never held while a Forward closes
	// byBox maps a sandbox id to its forwards by sandbox port.
	byBox map[string]map[int]*Forward
}

// Entry is one forward of a sandbox.
type Entry struct {
	Port     int
	HostPort int
	URL      string
}

// NewSet returns an empty set.
func NewSet() *Set { return &Set{byBox: map[string]map[int]*Forward{}} }

// Add records f as the forward of box's port f was started for, unless the
// port already has one or box already has limit forwards; it reports which.
func (s *Set) Add(box string, f *Forward, limit int) (added, full bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.byBox[box]
	if _, taken := m[f.o.Port]; taken {
		return false, false
	}
	if len(m) >= limit {
		return false, true
	}
	if m == nil {
		m = map[int]*Forward{}
		s.byBox[box] = m
	}
	m[f.o.Port] = f
	return true, false
}

// Get returns box's forward of port, if any.
func (s *Set) Get(box string, port int) (Entry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.byBox[box][port]
	if !ok {
		return Entry{}, false
	}
	return entryOf(f), true
}

// Count is how many forwards box has.
func (s *Set) Count(box string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byBox[box])
}

// List returns box's forwards by sandbox port.
func (s *Set) List(box string) []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Entry, 0, len(s.byBox[box]))
	for _, f := range s.byBox[box] {
		out = append(out, entryOf(f))
	}
	slices.SortFunc(out, func(a, b Entry) int { return cmp.Compare(a.Port, b.Port) })
	return out
}

// Remove closes and drops box's forward of port, reporting whether there was one.
func (s *Set) Remove(box string, port int) bool {
	s.mu.Lock()
	f, ok := s.byBox[box][port]
	delete(s.byBox[box], port)
	if len(s.byBox[box]) == 0 {
		delete(s.byBox, box)
	}
	s.mu.Unlock()
	if ok {
		f.Close()
	}
	return ok
}

// RemoveBox closes and drops every forward of box, returning how many.
func (s *Set) RemoveBox(box string) int {
	s.mu.Lock()
	m := s.byBox[box]
	delete(s.byBox, box)
	s.mu.Unlock()
	closeAll(m)
	return len(m)
}

// Close closes every forward of every sandbox.
func (s *Set) Close() {
	s.mu.Lock()
	all := s.byBox
	s.byBox = map[string]map[int]*Forward{}
	s.mu.Unlock()
	for _, m := range all {
		closeAll(m)
	}
}

func closeAll(m map[int]*Forward) {
	var wg sync.WaitGroup
	for _, f := range m {
		wg.Go(func() { f.Close() })
	}
	wg.Wait()
}

func entryOf(f *Forward) Entry {
	return Entry{Port: f.o.Port, HostPort: f.hostPort, URL: f.URL()}
}
