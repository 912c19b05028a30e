package ui

import (
	"testing"
)

// TestParkWhileHidden: with ParkHidden, hiding the window keeps Fyne's
// goroutine asleep (park queued again after each sleep), a snapshot wakes
// it, and showing the window ends the parking; without it, nothing parks.
func TestParkWhileHidden(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.ParkHidden = true })
	parks := 0
	h.u.parkWait = func(wake <-chan struct{}) {
		parks++
		select {
		case <-wake:
		default:
		}
	}
	h.u.ShowWindow()
	h.flush()
	h.u.hideWindow()
	// Run three parks, one at a time (flush would park forever).
	for range 3 {
		h.step()
	}
	if parks != 3 {
		t.Fatalf("hidden window: %d parks, want 3", parks)
	}
	woken := false
	h.u.parkWait = func(wake <-chan struct{}) {
		select {
		case <-wake:
			woken = true
		default:
		}
	}
	h.u.do(func() {}) // what a snapshot does
	h.step()          // the park, queued first, is woken
	if !woken {
		t.Error("work handed to Fyne's goroutine did not wake the park")
	}
	h.u.ShowWindow()
	h.flush() // ends: the park sees the window shown and stops
	if h.u.parking {
		t.Error("still parking with the window shown")
	}

	plain := newHarness(t)
	plain.u.parkWait = func(<-chan struct{}) { t.Error("parked without ParkHidden") }
	plain.u.ShowWindow()
	plain.u.hideWindow()
	plain.flush()
}

// step runs the first queued function.
func (h *harness) step() {
	h.mu.Lock()
	if len(h.queue) == 0 {
		h.mu.Unlock()
		h.t.Fatal("nothing queued")
	}
	f := h.queue[0]
	h.queue = h.queue[1:]
	h.mu.Unlock()
	f()
}
