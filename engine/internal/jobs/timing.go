package jobs

import (
	"fmt"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Timing is an execute call's: its timeout, how long the caller waits
// before a run still going continues as a job, and where progress goes.
type Timing struct {
	Timeout, Wait time.Duration
	Progress      sandbox.Progress
}

// TimingOf applies the defaults and limits l to a call's timing: wait is 0
// for background, DefaultWait when not given, and at most the maximum timeout.
func TimingOf(l config.Limits, timeout, wait time.Duration, background bool, progress sandbox.Progress) (Timing, error) {
	t, err := Timeout(l, timeout, background)
	if err != nil {
		return Timing{}, err
	}
	switch {
	case wait < 0:
		return Timing{}, fmt.Errorf("wait_s must not be negative: %w", sandbox.ErrInvalid)
	case background:
		wait = 0
	case wait == 0:
		wait = sandbox.DefaultWait
	}
	return Timing{Timeout: t, Wait: min(wait, l.MaxExecTimeout.Duration), Progress: progress}, nil
}

// Timeout applies the configured default and maximum (l) to a requested
// timeout; a background run's default is the maximum.
func Timeout(l config.Limits, requested time.Duration, background bool) (time.Duration, error) {
	maxT := l.MaxExecTimeout.Duration
	switch {
	case requested < 0:
		return 0, fmt.Errorf("timeout_s must not be negative: %w", sandbox.ErrInvalid)
	case requested > maxT:
		return 0, fmt.Errorf("timeout_s %d exceeds the maximum %d (limits.max_exec_timeout in the config): %w",
			int(requested.Seconds()), int(maxT.Seconds()), sandbox.ErrInvalid)
	case requested > 0:
		return requested, nil
	case background:
		return maxT, nil
	}
	return l.ExecTimeout.Duration, nil
}
