package host

import (
	"slices"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestSandboxIDsIgnoreStats(t *testing.T) {
	a := sandbox.Snapshot{Sandboxes: []sandbox.Info{{ID: "2", Name: "b"}, {ID: "1", Name: "a"}}}
	b := sandbox.Snapshot{Sandboxes: []sandbox.Info{{ID: "1", Name: "a", Stats: sandbox.Stats{CPUPercent: 50}}, {ID: "2", Name: "b"}}}
	if !slices.Equal(sandboxIDs(a), sandboxIDs(b)) {
		t.Errorf("order or stats changed the set: %v vs %v", sandboxIDs(a), sandboxIDs(b))
	}
	c := sandbox.Snapshot{Sandboxes: []sandbox.Info{{ID: "1", Name: "a"}}}
	if slices.Equal(sandboxIDs(a), sandboxIDs(c)) {
		t.Error("a removed sandbox did not change the set")
	}
	if got := sandboxIDs(sandbox.Snapshot{}); got == nil || len(got) != 0 {
		t.Errorf("empty snapshot: %#v, want an empty non-nil set", got)
	}
}
