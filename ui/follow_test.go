package ui

import (
	"slices"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestFilesTabFollowsWrites: a call that writes files shows in the Files
// tab without Reload: a new file appears, a removed one goes, the open
// folder stays open, and the chosen file's preview is read again when it
// changed.
func TestFilesTabFollowsWrites(t *testing.T) {
	h := selected(t, alpha)
	zero := 0
	h.b.logs = []sandbox.Activity{{Time: t0, Tool: "execute_command", Input: "ls", ExitCode: &zero}}
	h.b.listings["."] = []sandbox.FileEntry{{Path: "src", Type: "dir"}, {Path: "old.txt", Type: "file", Size: 3}}
	h.b.listings["src"] = []sandbox.FileEntry{{Path: "main.py", Type: "file", Size: 12, ModTime: t0}}
	h.b.file = sandbox.FileContent{Path: "/workspace/src/main.py", Data: []byte("print('hi')\n"), Size: 12}
	h.feed(snapshot(alpha))
	selectTab(h, "Files")
	f := h.u.detail.files
	f.tree.OpenBranch("src")
	h.flush()
	f.tree.Select("src/main.py")
	h.flush()

	// A model's call writes: out.csv appears, old.txt goes, main.py grows.
	h.b.mu.Lock()
	h.b.listings["."] = []sandbox.FileEntry{{Path: "src", Type: "dir"}, {Path: "out.csv", Type: "file", Size: 40}}
	h.b.listings["src"] = []sandbox.FileEntry{{Path: "main.py", Type: "file", Size: 24, ModTime: t0.Add(time.Second)}}
	h.b.file = sandbox.FileContent{Path: "/workspace/src/main.py", Data: []byte("print('hi')\nprint('yo')\n"), Size: 24}
	h.b.logs = append(h.b.logs, sandbox.Activity{Time: t0.Add(time.Second), Tool: "execute_code", Input: "open('out.csv','w')", ExitCode: &zero})
	h.b.mu.Unlock()
	h.feed(snapshot(alpha))
	h.flush()
	if kids := f.children[""]; !slices.Equal(kids, []string{"src", "out.csv"}) {
		t.Errorf("the workdir shows %q; want src and the new out.csv, without old.txt", kids)
	}
	if !f.tree.IsBranchOpen("src") || f.chosen != "src/main.py" {
		t.Errorf("src open %t, chosen %q; want both kept", f.tree.IsBranchOpen("src"), f.chosen)
	}
	if got := f.preview.text.Text; got != "print('hi')\nprint('yo')\n" {
		t.Errorf("the chosen file's preview is %q; want it read again", got)
	}
}

// TestSnapshotsTabFollows: a snapshot taken outside the tab (a model's
// call) shows in it without Reload, as soon as the engine says so.
func TestSnapshotsTabFollows(t *testing.T) {
	h, sb := snapHarness(t)
	s := h.u.detail.snaps
	zero := 0
	sb.mu.Lock()
	sb.snaps = append(sb.snaps, sandbox.SnapshotInfo{ID: "000000000abc", Label: "by the model", Created: t0})
	h.b.logs = append(h.b.logs, sandbox.Activity{Time: t0.Add(time.Second), Tool: "snapshot_sandbox", Input: "by the model", ExitCode: &zero})
	sb.mu.Unlock()
	h.feed(snapshot(alpha, beta)) // the engine's news: the activity's new entry
	h.flush()
	if len(s.list) != 1 || s.list[0].Label != "by the model" {
		t.Errorf("the tab lists %+v; want the model's snapshot", s.list)
	}
	// What the engine says of the sandbox changed (not its stats): the
	// list is read again at once, whatever its age.
	sb.mu.Lock()
	sb.snaps = nil
	sb.mu.Unlock()
	changed := alpha
	changed.Persistent = true
	h.feed(snapshot(changed, beta))
	h.flush()
	if len(s.list) != 0 {
		t.Errorf("the tab lists %+v after the engine's change; want it read again", s.list)
	}
}
