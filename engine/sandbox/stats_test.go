package sandbox

import (
	"errors"
	"fmt"
	"testing"
)

func TestCPUPercent(t *testing.T) {
	tests := []struct {
		name               string
		prevC, c, prevS, s uint64
		cpus               uint32
		want               float64
	}{
		{"one busy core of two", 0, 1e9, 0, 2e9, 2, 100},
		{"idle", 5, 5, 0, 1e9, 2, 0},
		{"counter reset", 10, 5, 0, 1e9, 2, 0},
		{"no system progress", 0, 1, 7, 7, 2, 0},
		{"no cpus reported", 0, 1, 0, 2, 0, 0},
	}
	for _, tt := range tests {
		if got := CPUPercent(tt.prevC, tt.c, tt.prevS, tt.s, tt.cpus); got != tt.want {
			t.Errorf("%s: CPUPercent = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestMemoryUsage(t *testing.T) {
	if got := MemoryUsage(100, map[string]uint64{"total_inactive_file": 30}); got != 70 {
		t.Errorf("cgroup v1: got %d, want 70", got)
	}
	if got := MemoryUsage(100, map[string]uint64{"inactive_file": 40}); got != 60 {
		t.Errorf("cgroup v2: got %d, want 60", got)
	}
	if got := MemoryUsage(10, map[string]uint64{"inactive_file": 40}); got != 0 {
		t.Errorf("cache above usage: got %d, want 0", got)
	}
}

func TestIsUserError(t *testing.T) {
	if !IsUserError(fmt.Errorf("sandbox %q: %w", "x", ErrNotFound)) {
		t.Error("wrapped ErrNotFound should be a user error")
	}
	if IsUserError(fmt.Errorf("dial: %w", ErrUnavailable)) {
		t.Error("ErrUnavailable is an infrastructure error, not a user error")
	}
	if IsUserError(errors.New("boom")) {
		t.Error("an unclassified error is not a user error")
	}
}
