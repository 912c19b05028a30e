package control

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// A sandbox's activity log can hold megabytes per entry (output up to
// limits.log_output_bytes per stream): a window asks only for what it has
// not seen (After) and only the end of each output (Keep), and fetches an
// entry whole when the person asks for it (ActivityEntry).

// LogsQuery says which entries of a sandbox's activity log a window wants:
// the last Tail of them (all when 0), only those after After (none older
// than what it has), with each output cut to its last Keep bytes (0: whole).
type LogsQuery struct {
	Tail  int
	Keep  int
	After time.Time
}

// LogEntry is an activity entry as a window gets it: its outputs perhaps
// cut to their ends, with their whole sizes.
type LogEntry struct {
	sandbox.Activity
	StdoutBytes int `json:"stdout_bytes"`
	StderrBytes int `json:"stderr_bytes"`
}

// Cut reports whether the entry's outputs are shorter than they were.
func (e LogEntry) Cut() bool { return len(e.Stdout) < e.StdoutBytes || len(e.Stderr) < e.StderrBytes }

// Entries applies q to a log, oldest first: what gui.logs answers (fakes
// of the engine use it too).
func Entries(acts []sandbox.Activity, q LogsQuery) []LogEntry {
	if q.Tail > 0 && len(acts) > q.Tail {
		acts = acts[len(acts)-q.Tail:]
	}
	out := make([]LogEntry, 0, len(acts))
	for _, a := range acts {
		if !q.After.IsZero() && !a.Time.After(q.After) {
			continue
		}
		e := LogEntry{Activity: a, StdoutBytes: len(a.Stdout), StderrBytes: len(a.Stderr)}
		e.Stdout, e.Stderr = tail(a.Stdout, q.Keep), tail(a.Stderr, q.Keep)
		out = append(out, e)
	}
	return out
}

// tail is the last keep bytes of s (all of it when keep is 0), starting on
// a whole character.
func tail(s string, keep int) string {
	if keep <= 0 || len(s) <= keep {
		return s
	}
	s = s[len(s)-keep:]
	for i := 0; i < utf8.UTFMax && i < len(s); i++ {
		if utf8.RuneStart(s[i]) {
			return s[i:]
		}
	}
	return s
}

// activityAt is sandbox ref's activity entry of time at, whole.
func activityAt(ctx context.Context, g GUI, ref string, at time.Time) (sandbox.Activity, error) {
	acts, err := g.Logs(ctx, ref, 0)
	if err != nil {
		return sandbox.Activity{}, err
	}
	for i := len(acts) - 1; i >= 0; i-- {
		if acts[i].Time.Equal(at) {
			return acts[i], nil
		}
	}
	return sandbox.Activity{}, fmt.Errorf("the activity log of %s no longer has the entry of %s (it keeps the newest): %w",
		ref, at.Local().Format("15:04:05"), sandbox.ErrNotFound)
}

// Logs returns the entries of sandbox ref's activity log that q asks for,
// oldest first.
func (g *GUIClient) Logs(ctx context.Context, ref string, q LogsQuery) ([]LogEntry, error) {
	return get[[]LogEntry](ctx, g, methodLogs, guiParams{Ref: ref, Tail: q.Tail, Keep: q.Keep, After: q.After})
}

// ActivityEntry returns sandbox ref's activity entry of time at, whole.
func (g *GUIClient) ActivityEntry(ctx context.Context, ref string, at time.Time) (sandbox.Activity, error) {
	return get[sandbox.Activity](ctx, g, methodActivityEntry, guiParams{Ref: ref, After: at})
}
