package fakeruntime_test

import (
	"testing"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/runtime/fakeruntime"
	"github.com/sandtray/sandtray/engine/runtime/runtimetest"
)

// TestConformance: the fake passes the conformance suite every runtime
// runs, so the engine's logic tests stand on a runtime that behaves as the
// real ones do.
func TestConformance(t *testing.T) {
	const image = "sandtray-conformance:1"
	runtimetest.Run(t, func(t *testing.T) runtime.Runtime {
		rt := fakeruntime.New()
		rt.AddImage(image, runtime.Image{Cmd: []string{"/bin/sh"}}, nil)
		t.Cleanup(func() { rt.Close() })
		return rt
	}, runtimetest.Options{Image: image, ImageRepo: "sandtray-conformance/commits"})
}
