package hostfs

import (
	"path/filepath"
	"testing"
)

func TestHostPathWithin(t *testing.T) {
	tests := []struct {
		root, p string
		want    bool
	}{
		{"/a/b", "/a/b", true},
		{"/a/b", "/a/b/c", true},
		{"/a/b", "/a/bc", false},
		{"/a/b", "/a", false},
		{"/a/b", "/a/b/../c", false},
		{"/a/b", "/a/b/..c", true},
	}
	for _, tt := range tests {
		if got := Within(tt.root, filepath.Clean(tt.p)); got != tt.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tt.root, tt.p, got, tt.want)
		}
	}
}
