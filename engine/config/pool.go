package config

import (
	"fmt"
	"slices"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Pool is the warm pool: started sandboxes kept ready, so a new
// sandbox answers without waiting for Docker to create and start one. The
// pool keeps Size spares of every image in Images and of every image a
// sandbox was created from within Idle, more after a burst, all within
// MaxTotal containers and MemoryMB of memory (see engine/internal/pool).
type Pool struct {
	Size     int      `toml:"size"`      // per image; 0 disables the pool
	Images   []string `toml:"images"`    // always kept; empty: just the default image
	MaxTotal int      `toml:"max_total"` // spares of all images together
	MemoryMB int64    `toml:"memory_mb"` // what all spares together may use, as measured
	Idle     Duration `toml:"idle"`      // an image unused this long loses its spares; bursts are remembered this long
}

// Bounds of the pool's keys: each spare is a running container.
const (
	MaxPoolSize  = 16
	MaxPoolTotal = 64
	minPoolMB    = 32
)

func defaultPoolConfig() Pool {
	return Pool{Size: 2, MaxTotal: 8, MemoryMB: 512, Idle: Duration{10 * time.Minute}}
}

// validate names the first bad pool key.
func (p Pool) validate() error {
	checks := []struct {
		bad      bool
		key, why string
	}{
		{p.Size < 0 || p.Size > MaxPoolSize, "pool.size", fmt.Sprintf("must be 0 (no pool) to %d", MaxPoolSize)},
		{slices.Contains(p.Images, ""), "pool.images", "must name images"},
		{p.MaxTotal < 0 || p.MaxTotal > MaxPoolTotal, "pool.max_total", fmt.Sprintf("must be 0 (no pool) to %d", MaxPoolTotal)},
		{p.MemoryMB < minPoolMB, "pool.memory_mb", fmt.Sprintf("must be at least %d", minPoolMB)},
		{p.Idle.Duration <= 0, "pool.idle", `must be above 0, like "10m"`},
	}
	for _, ch := range checks {
		if ch.bad {
			return fmt.Errorf("%s %s: %w", ch.key, ch.why, sandbox.ErrInvalid)
		}
	}
	return nil
}
