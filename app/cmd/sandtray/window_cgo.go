//go:build cgo

package main

import (
	"context"

	"fyne.io/fyne/v2/app"

	"github.com/sandtray/sandtray/app/host"
)

// windowBuilt says this binary has the tray app's window: Fyne's drivers
// need cgo.
const windowBuilt = true

// runWindow runs the tray app on the main goroutine until the person quits.
func runWindow(ctx context.Context, opts host.Options) error {
	return host.RunGUI(ctx, app.NewWithID(appID), opts)
}
