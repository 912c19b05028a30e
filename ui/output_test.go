package ui

import (
	"fmt"
	"net/url"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestTailAndHeadText(t *testing.T) {
	lines := strings.Repeat("0123456789\n", 1000) // 11,000 bytes
	tests := []struct {
		name    string
		got     func() (string, int)
		want    string
		wantCut int
	}{
		{"short", func() (string, int) { return TailText("a\nb\n", 100, 10) }, "a\nb\n", 0},
		{"by lines", func() (string, int) { return TailText(lines, 1<<20, 3) }, strings.Repeat("0123456789\n", 3), 11 * 997},
		{"by bytes, from a whole line", func() (string, int) { return TailText(lines, 100, 1000) }, strings.Repeat("0123456789\n", 9), 11 * 991},
		{"one long line, from a whole character", func() (string, int) { return TailText(strings.Repeat("é", 101), 9, 10) },
			strings.Repeat("é", 4), 202 - 8},
		{"head by lines", func() (string, int) { return HeadText(lines, 1<<20, 2) }, strings.Repeat("0123456789\n", 2), 11 * 998},
		{"head by bytes", func() (string, int) { return HeadText("ééé", 3, 10) }, "é", 4},
	}
	for _, tt := range tests {
		got, cut := tt.got()
		if got != tt.want || cut != tt.wantCut {
			t.Errorf("%s: %q, cut %d; want %q, cut %d", tt.name, got, cut, tt.want, tt.wantCut)
		}
	}
	if got := MoreText(1468006); got != "1.4 MiB more: open full log" {
		t.Errorf("MoreText = %q", got)
	}
}

// uiBudget is how long the window's thread may be busy with one update.
// The race detector slows Go code down several times (Fyne's text layout
// with it): the budget grows with it.
func uiBudget() time.Duration {
	if raceEnabled {
		return 200 * time.Millisecond * 5
	}
	return 200 * time.Millisecond
}

// timed runs one step of the window as its thread would and fails when
// the thread is busy longer than the budget (at once when it is still busy
// after a minute: the window froze). Busy is the CPU time of the thread
// that runs the step (where the system tells it, else the time it took):
// other processes on a shared machine do not count.
func (h *harness) timed(what string, step func()) {
	h.t.Helper()
	done := make(chan [2]time.Duration, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		start, cpu := time.Now(), threadCPU()
		step()
		h.flush()
		h.u.win.Resize(fyne.NewSize(1180, 760))
		test.LaidOutObjects(h.u.win.Content()) // lays out what changed, as a frame would
		busy, took := threadCPU()-cpu, time.Since(start)
		if cpu < 0 { // the system does not say
			busy = took
		}
		done <- [2]time.Duration{busy, took}
	}()
	select {
	case d := <-done:
		h.t.Logf("%s: busy %v (%v in all)", what, d[0].Round(time.Millisecond), d[1].Round(time.Millisecond))
		if d[0] > uiBudget() {
			h.t.Errorf("%s: the window's thread was busy %v; it must answer within %v", what, d[0].Round(time.Millisecond), uiBudget())
		}
	case <-time.After(time.Minute):
		h.t.Fatalf("%s: the window's thread is still busy after a minute; it must answer within %v", what, uiBudget())
	}
}

// TestHugeOutputKeepsTheWindowResponsive replays the freeze a user met:
// with a sandbox selected and Follow on, a build log of 1.4 MB over
// 25,000 lines, and then 50 MB on one line, came in; the window laid the
// whole of each out in one label and froze for good. Now each step leaves
// the window's thread free within 200 ms, the output shown is its end,
// and the link above it writes the whole of it to a file.
func TestHugeOutputKeepsTheWindowResponsive(t *testing.T) {
	dir := t.TempDir()
	var opened []string
	h := newHarness(t, func(o *Options) { o.OutputDir = dir })
	h.u.openURL = func(u *url.URL) error { opened = append(opened, u.Path); return nil }
	var build strings.Builder
	for i := range 25000 {
		fmt.Fprintf(&build, "[%5d/25000] CC src/module_%05d.c -> build/module_%05d.o\n", i+1, i, i)
	}
	zero := 0
	h.b.logs = []sandbox.Activity{{Time: t0, Tool: "execute_command", Input: "make -j2", ExitCode: &zero, Stdout: build.String()}}
	h.timed("the first snapshot", func() { h.feed(snapshot(alpha, beta)) })
	h.timed("selecting the sandbox with the 1.4 MB log", func() { h.selectRow(0) })
	a := h.u.detail.activity
	if !a.follow.Checked {
		t.Fatal("Follow is off")
	}
	shown := a.output.text.Text
	if !strings.HasSuffix(shown, "[25000/25000] CC src/module_24999.c -> build/module_24999.o") || len(shown) > shownBytes {
		t.Errorf("the activity shows %d bytes ending %q; want the log's end, at most %d bytes", len(shown), shown[max(0, len(shown)-80):], shownBytes)
	}
	if !a.output.more.Visible() || !strings.HasSuffix(a.output.more.Text, "more: open full log") {
		t.Errorf("no link to the full log: %q", a.output.more.Text)
	}

	huge := strings.Repeat("x", 50<<20)
	h.b.mu.Lock()
	h.b.logs = append(h.b.logs, sandbox.Activity{Time: t0.Add(time.Second), Tool: "execute_code", Input: "print('x' * 50_000_000)", ExitCode: &zero, Stdout: huge})
	h.b.mu.Unlock()
	h.timed("50 MB on one line, followed", func() { h.feed(snapshot(alpha, beta)) })
	if shown := a.output.text.Text; len(shown) > shownBytes || !strings.HasSuffix(shown, "xxxx") {
		t.Errorf("the activity shows %d bytes of the 50 MB line; want its end, at most %d", len(shown), shownBytes)
	}
	if more := a.output.more.Text; !a.output.more.Visible() || !strings.HasPrefix(more, "50") || !strings.HasSuffix(more, "MiB more: open full log") {
		t.Errorf("the link above the 50 MB output says %q", more)
	}
	h.timed("choosing the 1.4 MB entry", func() { a.list.Select(0) })
	h.timed("searching", func() { a.search.SetText("module_12345") })
	h.timed("another sandbox", func() { h.selectRow(1) })
	h.timed("back", func() { h.selectRow(0) })

	// The link writes the whole output to a file and opens it.
	h.timed("following again", func() { a.follow.SetChecked(true); a.search.SetText("") })
	test.Tap(a.output.more)
	h.flush()
	if len(opened) != 1 {
		t.Fatalf("opened %q; want the full log", opened)
	}
	got, err := os.ReadFile(opened[0])
	if err != nil || !strings.Contains(string(got), huge) {
		t.Errorf("the full log file has %d bytes (%v); want the whole 50 MB output", len(got), err)
	}
}

// TestHugeJobOutputIsBounded: a background job that prints 25,000 lines
// shows its end, bounded, and the window stays free.
func TestHugeJobOutputIsBounded(t *testing.T) {
	h := newHarness(t)
	var out strings.Builder
	for i := range 25000 {
		fmt.Fprintf(&out, "line %d of the job's output\n", i)
	}
	h.b.jobs = []sandbox.JobInfo{{JobStatus: sandbox.JobStatus{ID: "job-big", SandboxID: alpha.ID, Status: sandbox.JobRunning}, Command: "yes"}}
	h.b.jobOut = map[string][]string{"job-big": {out.String()}}
	h.feed(snapshot(alpha))
	h.selectRow(0)
	h.timed("the Jobs tab with 25,000 lines of output", func() { selectTab(h, "Jobs"); h.fire(0); h.fire(0) })
	v := h.u.detail.jobs
	if shown := v.output.text.Text; len(shown) > shownBytes || !strings.HasSuffix(shown, "line 24999 of the job's output\n") {
		t.Errorf("the job shows %d bytes ending %q", len(shown), shown[max(0, len(shown)-40):])
	}
	if !v.output.more.Visible() {
		t.Error("no link to the job's full log")
	}
}
