//go:build cgo

package main

import (
	"context"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"

	"github.com/sandtray/sandtray/app/host"
	"github.com/sandtray/sandtray/serve/control"
	"github.com/sandtray/sandtray/serve/socket"
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

// TestAFreshHomeStartsWithoutFyneErrors: the app made in a home with no
// ~/.cache yet logs nothing; Fyne used to log "Failed to create fyne cache
// space" at the first start of a new user.
func TestAFreshHomeStartsWithoutFyneErrors(t *testing.T) {
	home, err := os.MkdirTemp("", "fresh-home")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(home) // the app may still write its preferences there
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", "")
	var logged strings.Builder
	log.SetOutput(&logged)
	defer log.SetOutput(os.Stderr)
	a := newApp()
	defer a.Quit()
	if strings.Contains(logged.String(), "Failed to create") {
		t.Errorf("the app's first start in a fresh home logged:\n%s", logged.String())
	}
	if _, err := os.Stat(filepath.Join(home, ".cache", "fyne", appID)); err != nil {
		t.Errorf("Fyne's cache: %v", err)
	}
}
