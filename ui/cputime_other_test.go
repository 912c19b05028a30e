//go:build !linux

package ui

import "time"

// threadCPU is unknown here: the steps are timed by the clock.
func threadCPU() time.Duration { return -1 << 62 }
