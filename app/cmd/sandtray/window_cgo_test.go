//go:build cgo

package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"

	"github.com/sandtray/sandtray/app/host"
	"github.com/sandtray/sandtray/engine/control"
	"github.com/sandtray/sandtray/engine/socket"
)

// TestSecondAppStartExitsZero: starting the app while an engine of this
// user has a window asks that window to the front and succeeds, saying so,
// without making an app of its own (no Docker: the engine here is its two
// endpoints).
func TestSecondAppStartExitsZero(t *testing.T) {
	mcpPath := filepath.Join(t.TempDir(), "run", "mcp.sock")
	t.Setenv(socket.EnvSocket, mcpPath)
	mcpLn, err := socket.Listen(mcpPath)
	if err != nil {
		t.Fatal(err)
	}
	defer mcpLn.Close()
	ctlLn, err := socket.Listen(control.Path(mcpPath))
	if err != nil {
		t.Fatal(err)
	}
	srv := control.NewServer(nil, nil)
	focused := make(chan struct{}, 1)
	srv.SetWindow(func() { focused <- struct{}{} })
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ctlLn) }()
	defer func() { cancel(); <-served }()

	made := false
	defer func(old func() fyne.App) { newApp = old }(newApp)
	newApp = func() fyne.App { made = true; return nil }
	var stderr strings.Builder
	if err := runWindow(context.Background(), host.Options{Stderr: &stderr}); err != nil {
		t.Fatalf("a second start: %v, want success", err)
	}
	<-focused
	if made {
		t.Error("the second start made an app")
	}
	if !strings.Contains(stderr.String(), "Sandtray is open already: its window was brought to the front") {
		t.Errorf("it said %q", stderr.String())
	}
}
