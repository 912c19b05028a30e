package control

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestOneWindowPerEngine: a headless engine has no window to focus; an app
// attaches and then hears every focus request; a second attach is refused
// while it is there; once it leaves, the engine is headless again and the
// detach hook has run. An engine with its own window shows it on focus and
// refuses attaches.
func TestOneWindowPerEngine(t *testing.T) {
	srv, dial := serveWith(t, &fakeEngine{})
	detached := make(chan struct{}, 1)
	srv.OnDetach(func() { detached <- struct{}{} })
	srv.SetInfo("/home/me/.config/sandtray/config.toml", "/run/user/1000/sandtray/mcp.sock")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := dial().Focus(ctx); !IsNoWindow(err) {
		t.Fatalf("focus on a headless engine: %v, want no window", err)
	}

	attachCtx, leave := context.WithCancel(ctx)
	attached, focused := make(chan struct{}, 1), make(chan struct{}, 4)
	ended := make(chan error, 1)
	go func() {
		ended <- dial().Attach(attachCtx, func() { attached <- struct{}{} }, func() { focused <- struct{}{} })
	}()
	select {
	case <-attached:
	case err := <-ended:
		t.Fatalf("attach: %v", err)
	}
	st, err := dial().Focus(ctx)
	if err != nil || st.Window != WindowAttached || st.ConfigPath == "" || st.MCPSocket == "" {
		t.Fatalf("focus: %+v %v", st, err)
	}
	<-focused
	if err := dial().Attach(ctx, func() {}, func() {}); !errors.Is(err, sandbox.ErrConflict) {
		t.Fatalf("a second attach: %v, want a conflict", err)
	}
	leave()
	<-ended
	<-detached
	if st, err := dial().Status(ctx); err != nil || st.Window != WindowNone {
		t.Fatalf("after the app left: %+v %v", st, err)
	}

	shown := make(chan struct{}, 1)
	srv.SetWindow(func() { shown <- struct{}{} })
	if st, err := dial().Focus(ctx); err != nil || st.Window != WindowOwn {
		t.Fatalf("focus on the engine's own window: %+v %v", st, err)
	}
	<-shown
	if err := dial().Attach(ctx, func() {}, func() {}); !errors.Is(err, sandbox.ErrConflict) {
		t.Fatalf("attach beside the engine's own window: %v", err)
	}
}
