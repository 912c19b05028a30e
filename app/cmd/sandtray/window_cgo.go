//go:build cgo

package main

import (
	"context"
	"errors"
	"strings"

	"fyne.io/fyne/v2/app"

	"github.com/sandtray/sandtray/app/host"
)

// windowBuilt says this binary has the tray app's window: Fyne's drivers
// need cgo.
const windowBuilt = true

// runWindow runs the tray app on the main goroutine until the person quits,
// and starts it again when they asked to restart.
func runWindow(ctx context.Context, opts host.Options) error {
	var about strings.Builder
	printVersion(&about)
	opts.About = strings.TrimSpace(about.String())
	err := host.RunGUI(ctx, app.NewWithID(appID), opts)
	if errors.Is(err, host.ErrRestart) {
		return host.Reexec()
	}
	return err
}
