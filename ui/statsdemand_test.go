package ui

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// statsBackend is the fake backend that also takes ShowStats and
// FollowStats.
type statsBackend struct {
	*fakeBackend
	mu       sync.Mutex
	asked    [][]string
	followed []string
}

func (s *statsBackend) FollowStats(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.followed = append(s.followed, id)
}

// following is the sandbox last followed and how many times FollowStats was called.
func (s *statsBackend) following() (string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.followed) == 0 {
		return "", 0
	}
	return s.followed[len(s.followed)-1], len(s.followed)
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
// stats; shown, for the rows in view only (not all 60), and it follows
// (streams) only the selected sandbox, in view or not; hidden again, for
// none and it follows none. Snapshots that change nothing it asks for do
// not ask again.
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
	if id, _ := sb.following(); id != "" {
		t.Fatalf("window hidden, yet %q followed", id)
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
	if id, _ := sb.following(); id != "" {
		t.Errorf("nothing selected, yet %q followed", id)
	}
	h.u.selectSandbox(h.u.m.visible[59].ID)
	h.flush()
	if id, _ := sb.following(); id != h.u.m.visible[59].ID {
		t.Errorf("the selected sandbox out of view is not followed: %q", id)
	}
	if ids, _ := sb.last(); slices.Contains(ids, h.u.m.visible[59].ID) || len(ids) >= 30 {
		t.Errorf("the rows read now and then are not the rows in view: %v", ids)
	}
	_, follows := sb.following()
	h.feed(snapshot(boxes...))
	if _, again := sb.following(); again != follows {
		t.Errorf("an unchanged selection was followed again (%d calls, was %d)", again, follows)
	}
	h.u.hideWindow()
	h.flush()
	if ids, _ := sb.last(); len(ids) != 0 {
		t.Errorf("window closed, yet stats asked for %v", ids)
	}
	if id, _ := sb.following(); id != "" {
		t.Errorf("window closed, yet %q still followed", id)
	}
}
