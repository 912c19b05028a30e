package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/google/go-cmp/cmp"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// selected is a harness with alpha, beta and gamma listed and one selected.
func selected(t *testing.T, info sandbox.Info) *harness {
	h := newHarness(t)
	h.feed(snapshot(alpha, beta, gamma))
	h.selectRow(h.u.m.indexOf(info.ID))
	h.b.taken()
	return h
}

func TestActionsCallTheBackend(t *testing.T) {
	tests := []struct {
		name   string
		info   sandbox.Info
		button string
		want   []string
		says   string
	}{
		{"stop", alpha, "Stop", []string{"Stop(Sandtray app, " + alpha.ID + ")"}, "Stopped alpha."},
		{"kill", alpha, "Kill", []string{"Kill(" + alpha.ID + ")"}, "Killed everything running in alpha."},
		{"persist", alpha, "Persist", []string{"SetPersistent(Sandtray app, " + alpha.ID + ", true)"}, "alpha is now persistent"},
		{"unpersist", beta, "Make ephemeral", []string{"SetPersistent(Sandtray app, " + beta.ID + ", false)"}, "beta is now ephemeral"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := selected(t, tt.info)
			test.Tap(button(t, h.u.detail.actions.object(), tt.button))
			h.flush()
			if diff := cmp.Diff(tt.want, h.b.taken()); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if msg := h.u.detail.message.label; !msg.Visible() || msg.Importance != widget.SuccessImportance || !contains(msg.Text, tt.says) {
				t.Errorf("message %q (importance %d), want one saying %q", msg.Text, msg.Importance, tt.says)
			}
		})
	}
}

func TestStoppedSandboxCannotBeStoppedOrKilled(t *testing.T) {
	h := selected(t, beta)
	if !h.u.detail.actions.stop.Disabled() || !h.u.detail.actions.kill.Disabled() {
		t.Error("stop and kill are enabled for a stopped sandbox")
	}
	if h.u.detail.actions.del.Disabled() {
		t.Error("delete is disabled for a stopped sandbox")
	}
}

func TestActionErrorIsShownInPlace(t *testing.T) {
	h := selected(t, alpha)
	h.b.err = errBoom
	test.Tap(h.u.detail.actions.stop)
	h.flush()
	msg := h.u.detail.message.label
	if want := "Stop alpha: docker said no"; msg.Text != want || msg.Importance != widget.DangerImportance || !msg.Visible() {
		t.Errorf("message %q (importance %d, visible %t), want %q as an error", msg.Text, msg.Importance, msg.Visible(), want)
	}
	h.selectRow(0) // another sandbox: the old message goes
	if msg.Visible() {
		t.Error("the error stayed after selecting another sandbox")
	}
}

func TestDeleteAsksFirst(t *testing.T) {
	h := selected(t, gamma)
	test.Tap(h.u.detail.actions.del)
	test.Tap(button(t, h.overlay(), "Cancel"))
	h.flush()
	if calls := h.b.taken(); len(calls) != 0 {
		t.Errorf("cancelled delete called %v", calls)
	}
	test.Tap(h.u.detail.actions.del)
	test.Tap(button(t, h.overlay(), "Delete"))
	h.flush()
	if diff := cmp.Diff([]string{"Delete(Sandtray app, " + gamma.ID + ")"}, h.b.taken()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestActivityTab(t *testing.T) {
	h := newHarness(t)
	h.b.logs = activityFixture()
	h.feed(snapshot(alpha, beta))
	h.selectRow(0)
	a := h.u.detail.activity
	if got := len(a.matches); got != 3 {
		t.Fatalf("activity shows %d entries, want 3", got)
	}
	if got := a.title.Text; got != "Entry 3 of 3" {
		t.Errorf("following shows %q, want the newest entry", got)
	}
	test.Type(a.search, "traceback")
	if diff := cmp.Diff([]int{1}, a.matches); diff != "" {
		t.Errorf("search matches (-want +got):\n%s", diff)
	}
	a.list.Select(0)
	test.Tap(a.copyBtn)
	if got, want := h.u.app.Clipboard().Content(), ActivityText(h.b.logs[1]); got != want {
		t.Errorf("clipboard = %q, want %q", got, want)
	}
	if a.follow.Checked {
		t.Error("choosing an entry did not stop following")
	}
	h.b.logs = append(h.b.logs, sandbox.Activity{Time: t0, Tool: "execute_command", Input: "ls"})
	h.feed(snapshot(alpha, beta))
	if got := len(a.entries); got != 4 {
		t.Errorf("after new activity the tab has %d entries, want 4", got)
	}
}

func TestFilesTab(t *testing.T) {
	h := selected(t, alpha)
	h.b.listings["."] = []sandbox.FileEntry{{Path: "src", Type: "dir"}, {Path: "notes.txt", Type: "file", Size: 5}}
	h.b.listings["src"] = []sandbox.FileEntry{{Path: "main.py", Type: "file", Size: 12}}
	h.b.file = sandbox.FileContent{Path: "/workspace/src/main.py", Data: []byte("print('hi')\n"), Size: 12}
	selectTab(h, "Files")
	f := h.u.detail.files
	f.tree.OpenBranch("src")
	h.flush()
	f.tree.Select("src/main.py")
	h.flush()
	if got := f.preview.text.Text; got != "print('hi')\n" {
		t.Errorf("preview = %q", got)
	}
	test.Tap(f.save)
	h.flush()
	want := []string{
		"ListFiles(Sandtray app, " + alpha.ID + ", ., 1, false)",
		"ListFiles(Sandtray app, " + alpha.ID + ", src, 1, false)",
		"ReadFile(Sandtray app, " + alpha.ID + ", src/main.py, 0, 65536)",
		"SaveFiles(" + alpha.ID + ", src/main.py, /home/me/saved)",
	}
	if diff := cmp.Diff(want, h.b.taken()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if got := h.u.detail.message.label.Text; got != "Saved 2 files (2.0 KiB) to /home/me/saved/src/main.py." {
		t.Errorf("message = %q", got)
	}
}

func TestDetailsTabCopiesTheShellCommand(t *testing.T) {
	h := selected(t, alpha)
	selectTab(h, "Details")
	test.Tap(h.u.detail.info.copyCmd)
	if got, want := h.u.app.Clipboard().Content(), "docker exec -it -w /workspace aaaa01234567 sh -c 'command -v bash >/dev/null && exec bash; exec sh'"; got != want {
		t.Errorf("clipboard = %q, want %q", got, want)
	}
}

func selectTab(h *harness, name string) {
	for _, item := range h.u.detail.tabs.Items {
		if item.Text == name {
			h.u.detail.tabs.Select(item)
			h.flush()
			return
		}
	}
	h.t.Fatalf("no tab %q", name)
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func activityFixture() []sandbox.Activity {
	zero, one := 0, 1
	return []sandbox.Activity{
		{Time: t0.Add(-3e9 * 60), Tool: "create_sandbox", Client: "claude-ai 0.1.0", Input: "python:3.12-slim", Duration: 840},
		{Time: t0.Add(-2e9 * 60), Tool: "execute_code", Client: "claude-ai 0.1.0", Language: "python",
			Input: "import pandas\npandas.read_csv('x.csv')", ExitCode: &one, Duration: 1480,
			Stderr: "Traceback (most recent call last):\nFileNotFoundError: x.csv\n"},
		{Time: t0.Add(-1e9 * 60), Tool: "execute_command", Client: "claude-ai 0.1.0", Input: "ls -la",
			ExitCode: &zero, Duration: 12, Stdout: "total 0\n"},
	}
}

// TestActivityEntryThenAnotherSandbox replays the crash a user met: an
// Activity entry chosen in one sandbox, then another sandbox selected. The
// list redrew its rows from the old sandbox's matches into the new one's
// empty entries ("index out of range [0] with length 0"), and the panic took
// the engine down with the window.
func TestActivityEntryThenAnotherSandbox(t *testing.T) {
	h := newHarness(t)
	before := panicked.Load()
	h.b.logs = activityFixture()
	h.feed(snapshot(alpha, beta))
	h.selectRow(0)
	a := h.u.detail.activity
	a.list.Select(1)
	h.flush()
	h.selectRow(1)
	h.flush()
	h.selectRow(0)
	h.flush()
	a.list.Select(2)
	h.selectRow(1)
	h.flush()
	if !a.follow.Checked {
		t.Error("another sandbox's activity does not follow its newest entry")
	}
	if n := panicked.Load() - before; n > 0 {
		t.Errorf("%d panics in the window (the guard kept the app up; before it, the first ended it)", n)
	}
}
