package ui

import "time"

// parkFor is how long Fyne's event loop sleeps at a time while the window
// is hidden (Options.ParkHidden): what a tray menu click may wait before
// it is handled.
const parkFor = 200 * time.Millisecond

// Fyne's GLFW driver (v2.8) wakes 60 times a second to poll for input and
// redraw, whether or not a window is shown; with the window hidden that is
// nearly all of the tray app's idle CPU. While the window is hidden and
// Options.ParkHidden is set, the UI keeps Fyne's goroutine asleep in park,
// for parkFor at a time: between two parks Fyne runs what was queued for it
// (tray clicks, fyne.Do) and polls once. Anything the UI hands to Fyne's
// goroutine (a snapshot, the end of a click's work) wakes it at once.

// startParking parks Fyne's goroutine until the window is shown again, when
// ParkHidden is set and it is not parked already. Runs on Fyne's goroutine.
func (u *UI) startParking() {
	if !u.opts.ParkHidden || u.parking || u.shown {
		return
	}
	u.parking = true
	u.queue(u.park)
}

// park sleeps until woken or parkFor has passed, then queues itself again
// behind whatever was queued meanwhile, until the window is shown or the
// app is stopping (Run's context is done). Runs on Fyne's goroutine.
func (u *UI) park() {
	if u.shown || u.context().Err() != nil {
		u.parking = false
		return
	}
	u.parkWait(u.wake)
	u.queue(u.park)
}

// waitWoken waits for a wake-up or parkFor, whichever comes first.
func waitWoken(wake <-chan struct{}) {
	t := time.NewTimer(parkFor)
	defer t.Stop()
	select {
	case <-t.C:
	case <-wake:
	}
}

// nudge wakes a parked Fyne goroutine; it never blocks.
func (u *UI) nudge() {
	select {
	case u.wake <- struct{}{}:
	default:
	}
}
