//go:build cgo

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"

	"github.com/sandtray/sandtray/app/host"
)

// windowBuilt says this binary has the tray app's window: Fyne's drivers
// need cgo.
const windowBuilt = true

// newApp makes the Fyne app; tests make one that needs no display.
var newApp = func() fyne.App {
	makeFyneCache()
	return app.NewWithID(appID)
}

// makeFyneCache makes the folder Fyne keeps its cache in: Fyne makes only
// its last part, so in a fresh home (no ~/.cache yet) it logs "Failed to
// create fyne cache space" at every start.
func makeFyneCache() {
	if dir, err := os.UserCacheDir(); err == nil {
		_ = os.MkdirAll(filepath.Join(dir, "fyne"), 0o700)
	}
}

// runWindow runs the tray app on the main goroutine until the person quits,
// and starts it again when they asked to restart. When an engine of this
// user runs already, the app is that engine's window, or, when it has one,
// brings that window to the front and exits 0 (host.RunApp).
func runWindow(ctx context.Context, opts host.Options) error {
	var about strings.Builder
	printVersion(&about)
	opts.About = strings.TrimSpace(about.String())
	err := host.RunApp(ctx, newApp, opts)
	switch {
	case errors.Is(err, host.ErrFocused):
		fmt.Fprintln(opts.Stderr, "sandtray:", err)
		return nil
	case errors.Is(err, host.ErrRestart):
		return host.Reexec()
	}
	return err
}
