package run

import (
	"strings"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Stopped is why something outside a call stopped it (the disk watchdog,
// its sandbox dying), as the cause of the call's context: the call ends
// with Outcome, and its exit code is Code.
type Stopped struct {
	Outcome sandbox.Outcome
	Code    int
}

func (s *Stopped) Error() string { return strings.Join(s.Outcome.Notes(), "; ") }
