package engine

import (
	"context"
	"time"

	"github.com/sandtray/sandtray/engine/internal/safetext"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// inputKept caps the command or code stored with an activity entry.
const inputKept = 64 << 10

// record appends an activity entry to a sandbox's log, in memory and on disk.
func (e *Engine) record(id string, a sandbox.Activity) {
	if a.Time.IsZero() {
		a.Time = time.Now().UTC()
	}
	a.Input = safetext.CapString(a.Input, inputKept)
	var ok bool
	e.reg.Locked(func() {
		var b *box
		if b, ok = e.reg.BoxesLocked()[id]; ok {
			b.Activity = trimActivity(append(b.Activity, a))
		}
	})
	if !ok {
		return
	}
	if err := e.store.AppendActivity(id, a); err != nil {
		e.log.Warn("write activity log", "id", sandbox.ShortID(id), "err", err)
	}
	e.publish()
}

// activityBytesKept caps the output and input kept in memory per sandbox:
// with limits.log_output_bytes of 1 MiB per stream, activityKept entries
// alone could hold a gigabyte.
const activityBytesKept = 16 << 20

// activitySize is what an entry holds in memory, near enough.
func activitySize(a sandbox.Activity) int {
	return len(a.Stdout) + len(a.Stderr) + len(a.Input) + len(a.Error) + 256
}

// trimActivity drops the oldest entries past activityKept or past
// activityBytesKept (always keeping the newest), into a new slice so the
// dropped ones can be collected.
func trimActivity(acts []sandbox.Activity) []sandbox.Activity {
	size, from := 0, len(acts)
	for from > 0 && len(acts)-from < activityKept {
		next := activitySize(acts[from-1])
		if size+next > activityBytesKept && from < len(acts) {
			break
		}
		size += next
		from--
	}
	if from == 0 {
		return acts
	}
	return append(acts[:0:0], acts[from:]...)
}

// Logs returns the last tail entries of a sandbox's activity log (all when
// tail <= 0), oldest first.
func (e *Engine) Logs(ctx context.Context, ref string, tail int) ([]sandbox.Activity, error) {
	var acts []sandbox.Activity
	err := e.reg.WithRef(ref, func(b *box) error {
		acts = b.Activity
		if tail > 0 && len(acts) > tail {
			acts = acts[len(acts)-tail:]
		}
		acts = append([]sandbox.Activity(nil), acts...)
		return nil
	})
	return acts, err
}
