package pool

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestConfigFrom(t *testing.T) {
	c := config.Pool{Size: 2, MaxTotal: 8, MemoryMB: 512, Idle: config.Duration{Duration: time.Minute}}
	got := ConfigFrom(c, "default:1", func(n string) string { return "sandtray-" + n + "-e" }, map[string]string{"k": "v"})
	if !slices.Equal(got.Images, []string{"default:1"}) || got.Size != 2 || got.MaxTotal != 8 || got.MemoryMB != 512 ||
		got.Idle != time.Minute || got.Parallel < 2 || got.SandboxName("x") != "sandtray-x-e" || got.Scope["k"] != "v" {
		t.Errorf("ConfigFrom = %+v", got)
	}
	c.Images = []string{"b", "a", "b"}
	if got := ConfigFrom(c, "default:1", nil, nil).Images; !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("images %v, want a and b once each, without the default", got)
	}
}

// TestAdjustedRoundTrip: what the hand-out changed survives the state file
// and comes back onto the spec the labels give.
func TestAdjustedRoundTrip(t *testing.T) {
	want := sandbox.Spec{Image: "img", MemoryMB: 2048, CPUs: 1.5, Env: map[string]string{"A": "1"}}
	raw, err := json.Marshal(AdjustedFrom(want))
	if err != nil {
		t.Fatal(err)
	}
	var a *Adjusted
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatal(err)
	}
	spec := sandbox.Spec{Image: "img", MemoryMB: 512, CPUs: 1}
	a.Restore(&spec)
	if spec.MemoryMB != want.MemoryMB || spec.CPUs != want.CPUs || !maps.Equal(spec.Env, want.Env) {
		t.Errorf("restored %+v, want %+v", spec, want)
	}
	var none *Adjusted
	none.Restore(&spec) // a sandbox never pooled: nothing changes
	if spec.MemoryMB != want.MemoryMB {
		t.Errorf("a nil Adjusted changed the spec: %+v", spec)
	}
}
