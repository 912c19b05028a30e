package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/google/go-cmp/cmp"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// snapBackend is the fake Backend with snapshots, kept in memory.
type snapBackend struct {
	*fakeBackend
	snaps []sandbox.SnapshotInfo
}

func (f *snapBackend) Snapshot(_ context.Context, o sandbox.Owner, ref string, req sandbox.SnapshotRequest) (sandbox.SnapshotInfo, error) {
	f.record("Snapshot(%s, %s, %q)", o.Client, ref, req.Label)
	s := sandbox.SnapshotInfo{ID: "00000000000" + string(rune('a'+len(f.snaps))), Label: req.Label, Created: t0, SizeBytes: 5 << 20}
	f.mu.Lock()
	f.snaps = append(f.snaps, s)
	f.mu.Unlock()
	return s, f.err
}

func (f *snapBackend) ListSnapshots(_ context.Context, ref string) ([]sandbox.SnapshotInfo, error) {
	f.record("ListSnapshots(%s)", ref)
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sandbox.SnapshotInfo(nil), f.snaps...), nil
}

func (f *snapBackend) DeleteSnapshot(_ context.Context, o sandbox.Owner, ref, id string) error {
	f.record("DeleteSnapshot(%s, %s, %s)", o.Client, ref, id)
	return f.err
}

func (f *snapBackend) Restore(_ context.Context, o sandbox.Owner, ref, id string) (sandbox.RestoreResult, error) {
	f.record("Restore(%s, %s, %s)", o.Client, ref, id)
	return sandbox.RestoreResult{SandboxID: ref, Name: "alpha", SnapshotID: id, KernelsRestarted: true}, f.err
}

func (f *snapBackend) Fork(_ context.Context, o sandbox.Owner, ref string, req sandbox.ForkRequest) ([]sandbox.Fork, error) {
	f.record("Fork(%s, %s, %d)", o.Client, ref, req.Count)
	return []sandbox.Fork{{SandboxID: "f0f0f0f0f0f0", Name: "alpha-fork-1a2b"}}, f.err
}

// snapHarness is newHarness on a Backend with snapshots, alpha selected
// and its Snapshots tab shown.
func snapHarness(t *testing.T) (*harness, *snapBackend) {
	h := newHarness(t)
	h.u.win.Close()
	sb := &snapBackend{fakeBackend: h.b}
	h.u = New(h.u.app, sb, h.u.opts)
	h.u.queue, h.u.spawn = h.enqueue, h.enqueue
	h.u.after = func(time.Duration, func()) {}
	h.u.now = func() time.Time { return t0 }
	// the harness's cleanup closes h.u.win, now the new UI's
	h.feed(snapshot(alpha, beta))
	h.selectRow(h.u.m.indexOf(alpha.ID))
	tabs := h.u.detail.tabs
	tabs.Select(tabs.Items[len(tabs.Items)-1])
	h.flush()
	h.b.taken()
	return h, sb
}

func TestSnapshotsTab(t *testing.T) {
	h, sb := snapHarness(t)
	s := h.u.detail.snaps
	if got := h.u.detail.tabs.Selected().Text; got != "Snapshots" {
		t.Fatalf("last tab is %q", got)
	}
	if !s.empty.Visible() || !s.restore.Disabled() {
		t.Error("an empty list should say so, with restore disabled")
	}

	test.Type(s.label, "before the upgrade")
	test.Tap(button(t, s.object(), "Take snapshot"))
	h.flush()
	want := []string{`Snapshot(Sandtray app, ` + alpha.ID + `, "before the upgrade")`, "ListSnapshots(" + alpha.ID + ")"}
	if diff := cmp.Diff(want, h.b.taken()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if len(s.list) != 1 || s.empty.Visible() {
		t.Fatalf("list %+v after taking one", s.list)
	}
	row := s.line(s.list[0])
	for _, part := range []string{"before the upgrade", "5.0 MiB", "2026-03-14 09:26:53"} {
		if !strings.Contains(row, part) {
			t.Errorf("row %q lacks %q", row, part)
		}
	}
	if msg := h.u.detail.message.label; msg.Importance != widget.SuccessImportance || !strings.Contains(msg.Text, "Took snapshot") {
		t.Errorf("message %q", msg.Text)
	}

	// Restore asks first; Cancel does nothing.
	s.rows.Select(0)
	test.Tap(s.restore)
	test.Tap(button(t, h.overlay(), "Cancel"))
	h.flush()
	if calls := h.b.taken(); len(calls) != 0 {
		t.Errorf("a cancelled restore called %v", calls)
	}
	test.Tap(s.restore)
	test.Tap(button(t, h.overlay(), "Restore"))
	h.flush()
	if calls := h.b.taken(); len(calls) == 0 || calls[0] != "Restore(Sandtray app, "+alpha.ID+", "+sb.snaps[0].ID+")" {
		t.Errorf("restore called %v", calls)
	}
	if msg := h.u.detail.message.label.Text; !strings.Contains(msg, "kernels restarted") {
		t.Errorf("message %q does not say the kernels restarted", msg)
	}

	test.Tap(s.fork)
	h.flush()
	if calls := h.b.taken(); len(calls) == 0 || calls[0] != "Fork(Sandtray app, "+alpha.ID+", 1)" {
		t.Errorf("fork called %v", calls)
	}
	if msg := h.u.detail.message.label.Text; !strings.Contains(msg, "alpha-fork-1a2b") {
		t.Errorf("message %q does not name the fork", msg)
	}
	test.Tap(s.del)
	h.flush()
	if calls := h.b.taken(); len(calls) == 0 || calls[0] != "DeleteSnapshot(Sandtray app, "+alpha.ID+", "+sb.snaps[0].ID+")" {
		t.Errorf("delete called %v", calls)
	}
	var _ fyne.CanvasObject = s.object()
}

// A Backend without snapshots has no Snapshots tab.
func TestNoSnapshotsTabWithoutSnapshots(t *testing.T) {
	h := newHarness(t)
	for _, it := range h.u.detail.tabs.Items {
		if it.Text == "Snapshots" {
			t.Error("a Snapshots tab on a Backend without snapshots")
		}
	}
}

// TestRestoreTextSaysWhatTheEngineReports: the message after a restore
// says everything the engine reports of it: the paths restored, kernels
// restarted, background jobs it ended, and how long it took.
func TestRestoreTextSaysWhatTheEngineReports(t *testing.T) {
	got := RestoreText(sandbox.RestoreResult{Name: "alpha", SnapshotID: "0000000000ab", KernelsRestarted: true, JobsEnded: 2, PathsRestored: 1, Milliseconds: 1250})
	want := "Restored alpha to snapshot 0000000000ab in 1.2 s. 1 path restored. Its kernels restarted: the next call starts fresh ones. 2 background jobs ended by the restore."
	if got != want {
		t.Errorf("RestoreText = %q\nwant            %q", got, want)
	}
	if got := RestoreText(sandbox.RestoreResult{Name: "beta", SnapshotID: "s1"}); got != "Restored beta to snapshot s1." {
		t.Errorf("a restore that reports nothing more: %q", got)
	}
}

// A snapshot taken by an assistant shows in the open Snapshots tab: the
// engine moves the sandbox's SnapshotsChanged on, and the tab loads again
// at once, without waiting for its periodic reload.
func TestSnapshotsTabFollowsTheEnginesCounter(t *testing.T) {
	h, _ := snapHarness(t)
	h.feed(snapshot(alpha, beta))
	h.flush()
	if calls := h.b.taken(); len(calls) != 0 {
		t.Fatalf("an unchanged sandbox made the tab call %v", calls)
	}
	moved := alpha
	moved.SnapshotsChanged++
	h.feed(snapshot(moved, beta))
	h.flush()
	if diff := cmp.Diff([]string{"ListSnapshots(" + alpha.ID + ")"}, h.b.taken()); diff != "" {
		t.Errorf("calls after the counter moved (-want +got):\n%s", diff)
	}
}
