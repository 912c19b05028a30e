//go:build cgo

package host

import (
	"context"
	"time"

	"fyne.io/fyne/v2"

	"github.com/sandtray/sandtray/serve/control"
	"github.com/sandtray/sandtray/serve/socket"
	"github.com/sandtray/sandtray/ui"
)

// retryEvery is how often the app tries to start the engine again by
// itself while the problem may go away on its own (Docker Desktop still
// starting at login).
var retryEvery = 10 * time.Second

// waitForEngine shows why the engine cannot start, answers the socket's
// requests with it, and tries again when the person asks (and by itself
// now and then for Docker), until the engine runs: then its window
// replaces this one.
func (g *guiApp) waitForEngine(pr ui.Problem, err error) {
	g.log.Warn("the engine cannot start; the window says why and tries again", "err", err)
	g.gate.setWhy(problemWhy(pr))
	asked := make(chan struct{}, 1)
	w := ui.NewProblemWindow(g.a, func() {
		select {
		case asked <- struct{}{}:
		default:
		}
	}, g.cancel, g.log)
	stopCtl := g.serveProblemControl(w)
	w.Show(pr)
	g.wg.Go(func() {
		for {
			var tick <-chan time.Time
			t := time.NewTimer(retryEvery)
			if pr.RetryEvery > 0 {
				tick = t.C
			}
			select {
			case <-g.ctx.Done():
				t.Stop()
				stopCtl()
				return
			case <-asked:
			case <-tick:
				fyne.Do(w.Trying)
			}
			t.Stop()
			stopCtl() // the engine serves the control endpoint itself
			c, err := start(g.ctx, g.opts)
			if err == nil {
				g.log.Info("the engine runs now")
				g.takeEngine(c)
				fyne.Do(func() {
					w.Close()
					g.showWindow(c)
				})
				return
			}
			if p := problemOf(err, g.opts); p != nil {
				pr = *p
			} else {
				pr = ui.Problem{Title: "Sandtray cannot start", Detail: err.Error(), Hint: "Quit Sandtray, and see its log."}
			}
			g.gate.setWhy(problemWhy(pr))
			stopCtl = g.serveProblemControl(w)
			fyne.Do(func() { w.Show(pr) })
		}
	})
}

// serveProblemControl serves the control endpoint's app methods while the
// engine does not run, so a second start of the app brings the problem's
// window to the front instead of failing; it returns what stops it.
func (g *guiApp) serveProblemControl(w *ui.ProblemWindow) (stop func()) {
	mcpPath, err := socket.Path()
	if err != nil {
		return func() {}
	}
	ln, err := socket.Listen(control.Path(mcpPath), socket.WithLogger(g.log))
	if err != nil {
		g.log.Warn("control endpoint not served", "err", err)
		return func() {}
	}
	srv := control.NewServer(nil, g.log)
	srv.SetWindow(func() {
		fyne.Do(func() {
			w.Window().Show()
			w.Window().RequestFocus()
		})
	})
	ctx, cancel := context.WithCancel(g.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ctx, ln)
	}()
	return func() {
		cancel()
		<-done
		ln.Close()
	}
}
