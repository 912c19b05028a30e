package doctor

import (
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestPoolLine(t *testing.T) {
	on := config.Default().Pool
	off := on
	off.Size = 0
	for _, c := range []struct {
		cfg    config.Pool
		spares []sandbox.PoolImage
		level  Level
		want   []string
	}{
		{off, nil, Info, []string{"off", "starts cold"}},
		{on, nil, OK, []string{"no spares now", "keeps 2 per image used in the last 10m0s", "within 8 spares and 512 MB"}},
		{on, []sandbox.PoolImage{{Image: "a:1", Ready: 2}, {Image: "b:2", Ready: 1}}, OK, []string{"3 spares ready (a:1 2, b:2 1)"}},
	} {
		l := poolLine(c.cfg, c.spares)
		for _, w := range c.want {
			if l.Level != c.level || l.Topic != "pool" || !strings.Contains(l.Detail, w) {
				t.Errorf("poolLine(%+v, %v) = %+v, want level %v and %q", c.cfg, c.spares, l, c.level, w)
			}
		}
	}
}
