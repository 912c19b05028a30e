package ui

import (
	"bytes"
	"context"
	"runtime"
	"time"
)

// The watchdog notices a UI thread that stopped answering: every
// heartbeat it hands Fyne's goroutine a task that only says it ran; a task
// that has waited longer than stuckAfter means the thread is stuck (a
// layout that never ends, a call that blocks), and the log gets the
// thread's stack, once per stall, and a line when it answers again. The
// engine goes on serving meanwhile: it never waits for the window.
const (
	heartbeat  = time.Second
	stuckAfter = 5 * time.Second
)

// watchdog runs until ctx is done (Run's goroutine starts it).
func (u *UI) watchdog(ctx context.Context) {
	t := time.NewTicker(heartbeat)
	defer t.Stop()
	var asked time.Time // when the unanswered ping was queued; zero: none is
	answered := make(chan struct{}, 1)
	logged := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-answered:
			if logged {
				u.log.Warn("the window's thread answers again", "after", time.Since(asked).Round(time.Millisecond))
			}
			asked, logged = time.Time{}, false
		case now := <-t.C:
			switch {
			case asked.IsZero():
				asked = now
				u.queue(func() {
					select {
					case answered <- struct{}{}:
					default:
					}
				})
			case !logged && now.Sub(asked) > stuckAfter:
				logged = true
				u.log.Error("the window's thread has not answered for "+now.Sub(asked).Round(time.Second).String()+
					"; the engine carries on without it", "stack", string(mainStack()))
			}
		}
	}
}

// mainStack is the stack of the main goroutine, where Fyne's event loop
// runs; all goroutines' (cut to 64 KiB) when it cannot be told apart.
func mainStack() []byte {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for g := range bytes.SplitSeq(buf, []byte("\n\n")) {
		if bytes.HasPrefix(g, []byte("goroutine 1 [")) {
			return g
		}
	}
	return buf[:min(len(buf), 64<<10)]
}
