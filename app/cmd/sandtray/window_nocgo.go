//go:build !cgo

package main

import (
	"context"
	"errors"

	"github.com/sandtray/sandtray/app/host"
)

// windowBuilt says this binary has no window: built without cgo (a cross
// build, CGO_ENABLED=0), it links no Fyne driver and `sandtray` runs the
// engine alone, as `sandtray serve` does.
const windowBuilt = false

// runWindow is never reached without a window (runDefault checks
// windowBuilt); it exists so both builds share one runDefault.
func runWindow(context.Context, host.Options) error {
	return errors.New("this sandtray was built without cgo and has no window; use sandtray serve")
}
