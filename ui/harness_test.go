package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/serve/control"
)

func TestMain(m *testing.M) {
	time.Local = time.UTC // activity times render the same on every machine
	os.Exit(m.Run())
}

// t0 is the fixed "now" of every test.
var t0 = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)

// fakeBackend records every call as a readable line and answers from its fields.
type fakeBackend struct {
	mu       sync.Mutex
	calls    []string
	snaps    chan sandbox.Snapshot
	logs     []sandbox.Activity
	listings map[string][]sandbox.FileEntry
	file     sandbox.FileContent
	err      error // returned by every action
	progress []float64
	export   sandbox.Export
	jobs     []sandbox.JobInfo
	jobOut   map[string][]string   // job id -> output chunks, one per JobStatus call
	network  sandbox.EgressNetwork // what EgressNetwork answers
	busy     control.Busy          // what Busy answers
}

// Busy is a read: it is not recorded.
func (f *fakeBackend) Busy() control.Busy {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.busy
}

func newFakeBackend() *fakeBackend {
	return &fakeBackend{snaps: make(chan sandbox.Snapshot, 10), listings: map[string][]sandbox.FileEntry{}}
}

func (f *fakeBackend) record(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

// taken returns the calls so far, except the Logs polling, and forgets them.
func (f *fakeBackend) taken() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if len(c) < 4 || c[:4] != "Logs" {
			out = append(out, c)
		}
	}
	f.calls = nil
	return out
}

func (f *fakeBackend) Watch(context.Context) Snapshots { return f }

func (f *fakeBackend) Next(ctx context.Context) (sandbox.Snapshot, error) {
	select {
	case s := <-f.snaps:
		return s, nil
	case <-ctx.Done():
		return sandbox.Snapshot{}, ctx.Err()
	}
}

func (f *fakeBackend) Logs(_ context.Context, ref string, q control.LogsQuery) ([]control.LogEntry, error) {
	f.record("Logs(%s, %d)", ref, q.Tail)
	f.mu.Lock()
	defer f.mu.Unlock()
	return control.Entries(f.logs, q), nil
}

// ActivityEntry is a read, like Logs: it is not recorded.
func (f *fakeBackend) ActivityEntry(_ context.Context, ref string, at time.Time) (sandbox.Activity, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range f.logs {
		if a.Time.Equal(at) {
			return a, nil
		}
	}
	return sandbox.Activity{}, fmt.Errorf("no entry at %s: %w", at, sandbox.ErrNotFound)
}

func (f *fakeBackend) ListFiles(_ context.Context, o sandbox.Owner, ref, p string, depth int, all bool) (sandbox.Listing, error) {
	f.record("ListFiles(%s, %s, %s, %d, %t)", o.Client, ref, p, depth, all)
	return sandbox.Listing{Path: "/workspace/" + p, Entries: f.listings[p]}, f.err
}

func (f *fakeBackend) ReadFile(_ context.Context, o sandbox.Owner, ref, p string, off, limit int64) (sandbox.FileContent, error) {
	f.record("ReadFile(%s, %s, %s, %d, %d)", o.Client, ref, p, off, limit)
	return f.file, f.err
}

func (f *fakeBackend) SaveFiles(_ context.Context, ref, p, host string) (sandbox.CopyResult, error) {
	f.record("SaveFiles(%s, %s, %s)", ref, p, host)
	return sandbox.CopyResult{Path: host + "/" + p, Files: 2, Bytes: 2048}, f.err
}

func (f *fakeBackend) Stop(_ context.Context, o sandbox.Owner, ref string) (sandbox.Info, error) {
	f.record("Stop(%s, %s)", o.Client, ref)
	return sandbox.Info{}, f.err
}

func (f *fakeBackend) Kill(_ context.Context, ref string) error {
	f.record("Kill(%s)", ref)
	return f.err
}

func (f *fakeBackend) Delete(_ context.Context, o sandbox.Owner, ref string) error {
	f.record("Delete(%s, %s)", o.Client, ref)
	return f.err
}

func (f *fakeBackend) SetPersistent(_ context.Context, o sandbox.Owner, ref string, p bool) (sandbox.Info, error) {
	f.record("SetPersistent(%s, %s, %t)", o.Client, ref, p)
	return sandbox.Info{}, f.err
}

func (f *fakeBackend) Commit(_ context.Context, o sandbox.Owner, ref string, req sandbox.CommitRequest, progress sandbox.Progress) (sandbox.CommitResult, error) {
	f.record("Commit(%s, %s, %s, %t)", o.Client, ref, req.Image, req.Overwrite)
	for _, p := range f.progress {
		progress(p, 1, fmt.Sprintf("layer %.0f%%", p*100))
	}
	return sandbox.CommitResult{Image: req.Image, ImageID: "sha256:0123456789abcdef0123"}, f.err
}

func (f *fakeBackend) ExportDockerfile(_ context.Context, o sandbox.Owner, ref, host string) (sandbox.Export, error) {
	f.record("ExportDockerfile(%s, %s, %q)", o.Client, ref, host)
	return f.export, f.err
}

func (f *fakeBackend) SaveDockerfile(_ context.Context, ref, dir string) (sandbox.Export, error) {
	f.record("SaveDockerfile(%s, %s)", ref, dir)
	return sandbox.Export{Dir: dir, Files: []string{"a.py"}}, f.err
}

func (f *fakeBackend) SetPaused(p bool) { f.record("SetPaused(%t)", p) }

func (f *fakeBackend) Jobs(sandboxID string) []sandbox.JobInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []sandbox.JobInfo
	for _, j := range f.jobs {
		if sandboxID == "" || j.SandboxID == sandboxID {
			out = append(out, j)
		}
	}
	return out
}

// JobStatus answers with the job's next output chunk; offsets count bytes.
func (f *fakeBackend) JobStatus(_ context.Context, id string, since int64) (sandbox.JobStatus, error) {
	f.record("JobStatus(%s, %d)", id, since)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, j := range f.jobs {
		if j.ID == id {
			st := j.JobStatus
			st.NextOffset = since
			if chunks := f.jobOut[id]; len(chunks) > 0 {
				st.Output, f.jobOut[id] = chunks[0], chunks[1:]
				st.NextOffset += int64(len(st.Output))
			}
			return st, f.err
		}
	}
	return sandbox.JobStatus{}, fmt.Errorf("no job %s: %w", id, sandbox.ErrNotFound)
}

func (f *fakeBackend) JobStop(_ context.Context, id string) (sandbox.JobStatus, error) {
	f.record("JobStop(%s)", id)
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, j := range f.jobs {
		if j.ID == id && f.err == nil {
			f.jobs[i].Status = sandbox.JobStopped
			return f.jobs[i].JobStatus, nil
		}
	}
	return sandbox.JobStatus{}, f.err
}

func (f *fakeBackend) AnswerEgressHost(_ context.Context, ref, target string, a sandbox.EgressAnswer) (int, error) {
	f.record("AnswerEgressHost(%s, %s, %s)", ref, target, a)
	return 0, f.err
}

func (f *fakeBackend) AnswerEgress(_ context.Context, id string, a sandbox.EgressAnswer) error {
	f.record("AnswerEgress(%s, %s)", id, a)
	return f.err
}

// EgressNetwork is a read, like Logs: it is not recorded.
func (f *fakeBackend) EgressNetwork(context.Context, string) (sandbox.EgressNetwork, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.network, f.err
}

func (f *fakeBackend) RemoveEgressRule(_ context.Context, ref, pattern string) error {
	f.record("RemoveEgressRule(%s, %s)", ref, pattern)
	return f.err
}

func (f *fakeBackend) RemoveEgressApproval(_ context.Context, pattern string) error {
	f.record("RemoveEgressApproval(%s)", pattern)
	return f.err
}

func (f *fakeBackend) StopEphemeral(context.Context) error {
	f.record("StopEphemeral()")
	return f.err
}

// harness is a UI on Fyne's test app whose Fyne-goroutine and background
// work is queued and run on the test's goroutine by flush, so tests are
// deterministic and race-free.
type harness struct {
	t       *testing.T
	u       *UI
	b       *fakeBackend
	mu      sync.Mutex
	queue   []func()
	notices []string
	quits   []bool
	folder  string // what the folder picker "chooses"
	timers  []timer
}

// timer is work the UI asked to run after a delay; fire runs it.
type timer struct {
	d time.Duration
	f func()
}

func newHarness(t *testing.T, with ...func(*Options)) *harness {
	t.Helper()
	a := test.NewTempApp(t)
	h := &harness{t: t, b: newFakeBackend(), folder: "/home/me/saved"}
	opts := Options{
		SocketPath: "/run/user/1000/sandtray/mcp.sock",
		Quit:       func(stop bool) { h.quits = append(h.quits, stop) },
		Notify:     func(title, body string) { h.notices = append(h.notices, title+": "+body) },
	}
	for _, w := range with {
		w(&opts)
	}
	h.u = New(a, h.b, opts)
	h.u.queue, h.u.spawn = h.enqueue, h.enqueue // u.do queues through u.queue
	h.u.after = func(d time.Duration, f func()) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.timers = append(h.timers, timer{d, f})
	}
	h.u.pickHostFolder = func(_ fyne.Window, done func(string)) { done(h.folder) }
	h.u.now = func() time.Time { return t0 }
	h.u.pickFolder = func(_ string, done func(string)) { done(h.folder) }
	t.Cleanup(func() { h.u.win.Close() })
	return h
}

func (h *harness) enqueue(f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.queue = append(h.queue, f)
}

// flush runs queued work until none is left.
func (h *harness) flush() {
	for {
		h.mu.Lock()
		if len(h.queue) == 0 {
			h.mu.Unlock()
			return
		}
		f := h.queue[0]
		h.queue = h.queue[1:]
		h.mu.Unlock()
		f()
	}
}

// fire runs the delayed work asked for so far whose delay is at most d, as
// if that much time had passed, then what it queued.
func (h *harness) fire(d time.Duration) {
	h.mu.Lock()
	var due []func()
	kept := h.timers[:0]
	for _, t := range h.timers {
		if t.d <= d {
			due = append(due, t.f)
		} else {
			kept = append(kept, t)
		}
	}
	h.timers = kept
	h.mu.Unlock()
	for _, f := range due {
		f()
	}
	h.flush()
}

// feed shows a snapshot as Run would and lets the work it starts finish.
func (h *harness) feed(s sandbox.Snapshot) {
	h.u.apply(s)
	h.flush()
}

// selectRow selects a row of the sandbox list as a click would.
func (h *harness) selectRow(row int) {
	h.u.list.list.Select(row)
	h.flush()
}

// button finds a button by its text among what o shows.
func button(t *testing.T, o fyne.CanvasObject, text string) *widget.Button {
	t.Helper()
	for _, obj := range test.LaidOutObjects(o) {
		if b, ok := obj.(*widget.Button); ok && b.Text == text && b.Visible() {
			return b
		}
	}
	t.Fatalf("no button %q", text)
	return nil
}

// overlay is the topmost dialog.
func (h *harness) overlay() fyne.CanvasObject {
	h.t.Helper()
	top := h.u.win.Canvas().Overlays().Top()
	if top == nil {
		h.t.Fatal("no dialog is showing")
	}
	return top
}

var errBoom = errors.New("docker said no")
