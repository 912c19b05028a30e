package ui

import (
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestPoolText(t *testing.T) {
	for _, c := range []struct {
		pool []sandbox.PoolImage
		want string
	}{
		{nil, ""},
		{[]sandbox.PoolImage{{Image: "sandtray/sandbox:latest", Ready: 2, Want: 2, Configured: true}},
			"Warm: 2 ready (sandtray/sandbox 2/2)"},
		{[]sandbox.PoolImage{
			{Image: "sandtray/sandbox:latest", Ready: 1, Want: 5, Configured: true},
			{Image: "registry.local:5000/team/py:3.12", Ready: 2, Want: 2},
			{Image: "forgotten:1", Ready: 0, Want: 0},
		}, "Warm: 3 ready (sandtray/sandbox 1/5, team/py:3.12 2/2)"},
	} {
		if got := PoolText(c.pool); got != c.want {
			t.Errorf("PoolText(%+v) = %q, want %q", c.pool, got, c.want)
		}
	}
}
