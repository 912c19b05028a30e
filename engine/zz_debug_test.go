package engine

import (
	"context"
	"testing"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestZZDebugGVisor(t *testing.T) {
	te := newTestEngine(t, func(c *config.Config) { c.Sandbox.Runtime = "runsc" })
	info, err := te.Create(context.Background(), te.owner, sandbox.CreateRequest{}, nil)
	t.Logf("%+v %v", info.ID, err)
	if err == nil {
		t.Logf("%+v", te.command(t, info.ID, "echo hi; cat /proc/1/cmdline | tr '\\0' ' '"))
	}
}
