package ui

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// statsBackend is the fake backend that also takes ShowStats.
type statsBackend struct {
	*fakeBackend
	mu    sync.Mutex
	asked [][]string
}

func (s *statsBackend) ShowStats(ids []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, slices.Sorted(slices.Values(ids)))
}

func (s *statsBackend) last() ([]string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.asked) == 0 {
		return nil, 0
	}
	return s.asked[len(s.asked)-1], len(s.asked)
}

// TestStatsOnlyForRowsInView: with the window hidden the UI asks for no
// stats; shown, for the rows in view and the selected sandbox only (not
// all 60); hidden again, for none. Snapshots that change nothing it asks
// for do not ask again.
func TestStatsOnlyForRowsInView(t *testing.T) {
	h := newHarness(t)
	sb := &statsBackend{fakeBackend: h.b}
	h.u.b = sb
	var boxes []sandbox.Info
	for i := range 60 {
		boxes = append(boxes, box(fmt.Sprintf("id%02d", i), fmt.Sprintf("sb%02d", i), sandbox.StatusRunning, false, "c", time.Duration(i+1)*time.Minute))
	}
	h.feed(snapshot(boxes...))
	if ids, _ := sb.last(); len(ids) != 0 {
		t.Fatalf("window hidden, yet stats asked for %v", ids)
	}
	h.u.ShowWindow()
	h.feed(snapshot(boxes...))
	ids, n := sb.last()
	if len(ids) == 0 || len(ids) >= 30 || !slices.Contains(ids, h.u.m.visible[0].ID) {
		t.Fatalf("window shown: stats asked for %v; want the first rows only", ids)
	}
	h.feed(snapshot(boxes...))
	if _, again := sb.last(); again != n {
		t.Errorf("an unchanged view asked for stats again (%d calls, was %d)", again, n)
	}
	h.u.selectSandbox(h.u.m.visible[59].ID)
	h.flush()
	if ids, _ := sb.last(); !slices.Contains(ids, h.u.m.visible[59].ID) {
		t.Errorf("the selected sandbox out of view is not sampled: %v", ids)
	}
	h.u.hideWindow()
	h.flush()
	if ids, _ := sb.last(); len(ids) != 0 {
		t.Errorf("window closed, yet stats asked for %v", ids)
	}
}
