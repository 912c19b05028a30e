package ui

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestRandomClicksNeverIndexStaleRows replays random sequences of what a
// person and the engine do at once: snapshots that add, drop and reorder
// sandboxes, rows selected (some past the list's end, as a late click
// is), tabs switched, activity entries, jobs and snapshots chosen while
// their lists shrink under them, filters typed, columns sorted, and the
// engine's answers arriving late. Every list must only ever read the rows
// it has: no panic (each would have been the window's crash, and with it
// the engine's, before the guard) is recovered in any sequence.
func TestRandomClicksNeverIndexStaleRows(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) { randomClicks(t, seed, 90) })
	}
}

func randomClicks(t *testing.T, seed uint64, steps int) {
	h, sb := snapHarness(t)
	var log logBuffer
	h.u.log = withLogger(&log)
	r := rand.New(rand.NewPCG(seed, 1))
	boxes := []sandbox.Info{alpha, beta, gamma}
	for i := range 4 {
		boxes = append(boxes, box(fmt.Sprintf("d%03d", i), fmt.Sprintf("delta-%d", i), sandbox.StatusRunning, i%2 == 0, "Cursor 1.7", time.Duration(i)*time.Minute))
	}
	before := panicked.Load()
	var did []string
	ops := []struct {
		name string
		do   func() string
	}{
		{"snapshot", func() string {
			pick := r.Perm(len(boxes))[:r.IntN(len(boxes)+1)]
			var shown []sandbox.Info
			for _, i := range pick {
				shown = append(shown, boxes[i])
			}
			h.u.apply(snapshot(shown...))
			return fmt.Sprint(len(shown), " sandboxes")
		}},
		{"select a sandbox", func() string {
			row := r.IntN(len(h.u.m.visible)+3) - 1
			h.u.list.list.Select(row)
			return fmt.Sprint("row ", row)
		}},
		{"unselect", func() string { h.u.list.list.UnselectAll(); return "" }},
		{"tab", func() string {
			items := h.u.detail.tabs.Items
			tab := items[r.IntN(len(items))]
			h.u.detail.tabs.Select(tab)
			return tab.Text
		}},
		{"activity entry", func() string {
			a := h.u.detail.activity
			row := r.IntN(len(a.matches)+3) - 1
			a.list.Select(row)
			return fmt.Sprint("row ", row)
		}},
		{"follow", func() string { h.u.detail.activity.follow.SetChecked(r.IntN(2) == 0); return "" }},
		{"search", func() string {
			q := []string{"", "ls", "pandas", "nothing", "e"}[r.IntN(5)]
			h.u.detail.activity.search.SetText(q)
			return q
		}},
		{"the log changes", func() string {
			logs := activityFixture()[:r.IntN(4)]
			h.b.mu.Lock()
			h.b.logs = logs
			h.b.mu.Unlock()
			return fmt.Sprint(len(logs), " entries")
		}},
		{"jobs change", func() string {
			var jobs []sandbox.JobInfo
			for i := range r.IntN(4) {
				jobs = append(jobs, sandbox.JobInfo{JobStatus: sandbox.JobStatus{ID: fmt.Sprint("job-", i), SandboxID: boxes[r.IntN(len(boxes))].ID,
					Status: sandbox.JobRunning}, Command: "sleep 9"})
			}
			h.b.mu.Lock()
			h.b.jobs = jobs
			h.b.mu.Unlock()
			h.u.detail.jobs.refresh()
			return fmt.Sprint(len(jobs), " jobs")
		}},
		{"job", func() string {
			v := h.u.detail.jobs
			row := r.IntN(len(v.jobs)+3) - 1
			v.list.Select(row)
			return fmt.Sprint("row ", row)
		}},
		{"snapshots change", func() string {
			var snaps []sandbox.SnapshotInfo
			for i := range r.IntN(4) {
				snaps = append(snaps, sandbox.SnapshotInfo{ID: fmt.Sprintf("snap%08d", i), Created: t0})
			}
			sb.mu.Lock()
			sb.snaps = snaps
			sb.mu.Unlock()
			if h.u.detail.snaps != nil {
				h.u.detail.snaps.load()
			}
			return fmt.Sprint(len(snaps), " snapshots")
		}},
		{"snapshot row", func() string {
			s := h.u.detail.snaps
			row := r.IntN(len(s.list)+3) - 1
			s.rows.Select(row)
			return fmt.Sprint("row ", row)
		}},
		{"filter", func() string {
			q := []string{"", "alpha", "delta", "cursor", "zzz"}[r.IntN(5)]
			h.u.list.query.SetText(q)
			return q
		}},
		{"status filter", func() string {
			s := statusFilters[r.IntN(len(statusFilters))]
			h.u.list.status.SetSelected(s)
			return s
		}},
		{"sort", func() string {
			c := listColumns[r.IntN(len(listColumns))].title
			h.u.list.sortBy(c)
			return c
		}},
		{"tap a button", func() string {
			var buttons []*widget.Button
			for _, o := range test.LaidOutObjects(h.u.win.Content()) {
				if b, ok := o.(*widget.Button); ok && b.Visible() && !b.Disabled() && b.OnTapped != nil {
					buttons = append(buttons, b)
				}
			}
			if len(buttons) == 0 {
				return "none"
			}
			b := buttons[r.IntN(len(buttons))]
			test.Tap(b)
			return b.Text
		}},
		{"answer a dialog", func() string {
			top := h.u.win.Canvas().Overlays().Top()
			if top == nil {
				return "none"
			}
			var buttons []*widget.Button
			for _, o := range test.LaidOutObjects(top) {
				if b, ok := o.(*widget.Button); ok && b.Visible() && !b.Disabled() {
					buttons = append(buttons, b)
				}
			}
			if len(buttons) == 0 {
				h.u.win.Canvas().Overlays().Remove(top)
				return "closed"
			}
			b := buttons[r.IntN(len(buttons))]
			test.Tap(b)
			if h.u.win.Canvas().Overlays().Top() == top {
				h.u.win.Canvas().Overlays().Remove(top)
			}
			return b.Text
		}},
		{"the engine answers", func() string { h.flush(); return "" }},
		{"time passes", func() string { h.fire(time.Minute); return "" }},
		{"a frame", func() string {
			h.u.win.Resize(fyne.NewSize(float32(900+r.IntN(400)), float32(600+r.IntN(300))))
			for _, o := range test.LaidOutObjects(h.u.win.Content()) {
				if l, ok := o.(*widget.List); ok {
					l.Refresh()
				}
			}
			test.LaidOutObjects(h.u.win.Content())
			return ""
		}},
	}
	for i := range steps {
		op := ops[r.IntN(len(ops))]
		did = append(did, op.name+" "+op.do())
		if n := panicked.Load() - before; n > 0 {
			t.Fatalf("seed %d, step %d (%s): a panic, the window's crash before the guard:\n%s\nsteps:\n%s",
				seed, i, did[len(did)-1], lastPanic(log.String()), strings.Join(did, "\n"))
		}
	}
	h.flush()
	if n := panicked.Load() - before; n > 0 {
		t.Fatalf("seed %d, at the end: a panic:\n%s", seed, lastPanic(log.String()))
	}
}

// lastPanic is the log's last recovered panic, with the top of its stack.
func lastPanic(log string) string {
	i := strings.LastIndex(log, "the window hit a bug")
	if i < 0 {
		return log
	}
	return log[i:min(len(log), i+3000)]
}
