package docker

import (
	"testing"
)

func TestPullSizesStopAtTheLimit(t *testing.T) {
	p := pullSizes{limit: 10 << 20}
	steps := []struct {
		id   string
		size int64
		over bool
	}{
		{"a", 4 << 20, false},
		{"a", 4 << 20, false}, // the same layer reported again counts once
		{"b", 5 << 20, false},
		{"", 50 << 20, false}, // a line without a layer counts nothing
		{"c", 2 << 20, true},
	}
	for _, s := range steps {
		if err := p.add(s.id, s.size); (err != nil) != s.over {
			t.Errorf("add(%q, %d) = %v; want over the limit: %v", s.id, s.size, err, s.over)
		}
	}
}
