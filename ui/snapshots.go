package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// SnapshotBackend is what the Snapshots tab needs of the Backend; a
// Backend without it shows no such tab.
type SnapshotBackend = sandbox.Snapshots

// snapshotsTab lists the selected sandbox's snapshots with their sizes and
// times: take one (with a label), and restore (after a confirmation),
// fork or delete the one selected.
type snapshotsTab struct {
	u        *UI
	b        SnapshotBackend
	sandbox  string    // the sandbox the list is of
	loaded   time.Time // when the list was last asked for; it is asked again after snapshotsStale
	sig      string    // infoSignature of the sandbox when the list was asked for
	list     []sandbox.SnapshotInfo
	selected int // index in list, -1 for none
	rows     *widget.List
	label    *widget.Entry
	take     *widget.Button
	restore  *widget.Button
	fork     *widget.Button
	del      *widget.Button
	empty    *widget.Label
}

func newSnapshotsTab(u *UI, b SnapshotBackend) *snapshotsTab {
	s := &snapshotsTab{u: u, b: b, selected: -1,
		label: widget.NewEntry(),
		empty: widget.NewLabel(noSnapshots)}
	s.label.SetPlaceHolder("Label (optional), e.g. before the upgrade")
	s.empty.Wrapping = fyne.TextWrapWord
	s.rows = widget.NewList(func() int { return len(s.list) },
		func() fyne.CanvasObject { return widget.NewLabel("") },
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i >= 0 && i < len(s.list) { // the list may redraw a row it counted before the snapshots changed
				o.(*widget.Label).SetText(s.line(s.list[i]))
			}
		})
	s.rows.OnSelected = func(i widget.ListItemID) {
		if i >= 0 && i < len(s.list) {
			s.selected = i
		} else {
			s.selected = -1
		}
		s.buttons()
	}
	s.rows.OnUnselected = func(widget.ListItemID) { s.selected = -1; s.buttons() }
	s.take = widget.NewButtonWithIcon("Take snapshot", theme.ContentAddIcon(), s.doTake)
	s.restore = widget.NewButtonWithIcon("Restore…", theme.HistoryIcon(), s.confirmRestore)
	s.fork = widget.NewButtonWithIcon("Fork sandbox", theme.ContentCopyIcon(), s.doFork)
	s.del = widget.NewButtonWithIcon("Delete", theme.DeleteIcon(), s.doDelete)
	s.buttons()
	return s
}

func (s *snapshotsTab) object() fyne.CanvasObject {
	top := container.NewBorder(nil, nil, nil, s.take, s.label)
	bottom := container.NewHBox(s.restore, s.fork, s.del)
	return container.NewBorder(top, bottom, nil, nil, container.NewStack(s.empty, s.rows))
}

func (s *snapshotsTab) line(sn sandbox.SnapshotInfo) string {
	label := sn.Label
	if label == "" {
		label = "(no label)"
	}
	return fmt.Sprintf("%s · %s · %s · %s", label, FormatBytes(uint64(max(sn.SizeBytes, 0))), sn.Created.Local().Format("2006-01-02 15:04:05"), sn.ID)
}

// buttons enables what applies to the selection, and nothing when the
// runtime cannot commit, saying why.
func (s *snapshotsTab) buttons() {
	cannot := s.u.lacking(capCommit)
	for _, b := range []*widget.Button{s.restore, s.del} {
		setEnabled(b, cannot == "" && s.selected >= 0 && s.selected < len(s.list))
	}
	setEnabled(s.take, cannot == "")
	setEnabled(s.fork, cannot == "")
	if cannot != "" {
		s.empty.SetText("Snapshots are off: " + cannot + ".")
	} else {
		s.empty.SetText(noSnapshots)
	}
	if len(s.list) == 0 || cannot != "" {
		s.empty.Show()
	} else {
		s.empty.Hide()
	}
}

const noSnapshots = "No snapshots yet. Take one to be able to go back to the sandbox's files as they are now."

// snapshotsStale is how long a list of snapshots is shown before the tab,
// refreshed, asks for it again (the tab refreshes with every update of the
// engine's state; its own actions reload at once).
const snapshotsStale = 10 * time.Second

// refresh shows info's snapshots, loaded again when another sandbox is
// shown, when what the engine says of the sandbox changed (but for its
// figures: a snapshot it took, restored or dropped), or when the list is
// stale. A snapshot a call took also reloads it (detailPane.newActivity).
func (s *snapshotsTab) refresh(info sandbox.Info) {
	sig := infoSignature(info)
	s.buttons() // the runtime's capabilities come with every state
	switch {
	case s.sandbox != info.ID:
		s.sandbox, s.list, s.selected = info.ID, nil, -1
		s.rows.UnselectAll()
		s.rows.Refresh()
		s.buttons()
	case sig != s.sig:
	case s.u.now().Sub(s.loaded) < snapshotsStale:
		return
	}
	s.sig = sig
	s.load()
}

// infoSignature is what the engine says of a sandbox but for what changes
// on its own (its stats, when it was last used).
func infoSignature(info sandbox.Info) string {
	info.Stats, info.LastUsed = sandbox.Stats{}, time.Time{}
	b, _ := json.Marshal(info)
	return string(b)
}

func (s *snapshotsTab) load() {
	id := s.sandbox
	s.loaded = s.u.now()
	var list []sandbox.SnapshotInfo
	s.u.background(func(ctx context.Context) error {
		var err error
		list, err = s.b.ListSnapshots(ctx, id)
		return err
	}, func(err error) {
		if err != nil || id != s.sandbox {
			return
		}
		s.list = list
		if s.selected >= len(list) {
			s.selected = -1
			s.rows.UnselectAll()
		}
		s.rows.Refresh()
		s.buttons()
	})
}

func (s *snapshotsTab) current() (sandbox.SnapshotInfo, bool) {
	if s.selected < 0 || s.selected >= len(s.list) {
		return sandbox.SnapshotInfo{}, false
	}
	return s.list[s.selected], true
}

// act runs work as the detail pane's actions do, then reloads the list.
func (s *snapshotsTab) act(what string, work func(ctx context.Context) (string, error)) {
	s.u.detail.showProgress(what + "…")
	var done string
	s.u.background(func(ctx context.Context) error {
		var err error
		done, err = work(ctx)
		return err
	}, func(err error) {
		if err != nil {
			s.u.detail.showError(what, err)
		} else {
			s.u.detail.showInfo(done)
		}
		s.load()
	})
}

func (s *snapshotsTab) doTake() {
	id, label := s.sandbox, strings.TrimSpace(s.label.Text)
	s.act("Take a snapshot", func(ctx context.Context) (string, error) {
		sn, err := s.b.Snapshot(ctx, owner, id, sandbox.SnapshotRequest{Label: label})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Took snapshot %s (%s).", sn.ID, FormatBytes(uint64(max(sn.SizeBytes, 0)))), nil
	})
	s.label.SetText("")
}

func (s *snapshotsTab) confirmRestore() {
	sn, ok := s.current()
	if !ok {
		return
	}
	id := s.sandbox
	d := dialog.NewConfirm("Restore to this snapshot?",
		fmt.Sprintf("The sandbox's files go back to snapshot %s (%s).\nFiles written since are removed; its background jobs and kernels end.", sn.ID, sn.Created.Local().Format("2006-01-02 15:04")),
		func(yes bool) {
			if !yes {
				return
			}
			s.act("Restore", func(ctx context.Context) (string, error) {
				res, err := s.b.Restore(ctx, owner, id, sn.ID)
				if err != nil {
					return "", err
				}
				return RestoreText(res), nil
			})
		}, s.u.win)
	d.SetConfirmText("Restore")
	d.SetDismissText("Cancel")
	d.SetConfirmImportance(widget.DangerImportance)
	d.Show()
}

// RestoreText says what a restore did, as the engine reports it.
func RestoreText(res sandbox.RestoreResult) string {
	msg := fmt.Sprintf("Restored %s to snapshot %s", res.Name, res.SnapshotID)
	if res.Milliseconds > 0 {
		msg += " in " + FormatDuration(res.Milliseconds)
	}
	msg += "."
	if res.PathsRestored > 0 {
		msg += fmt.Sprintf(" %s restored.", plural(res.PathsRestored, "path", "paths"))
	}
	if res.KernelsRestarted {
		msg += " Its kernels restarted: the next call starts fresh ones."
	}
	if res.JobsEnded > 0 {
		msg += fmt.Sprintf(" %s ended by the restore.", plural(res.JobsEnded, "background job", "background jobs"))
	}
	return msg
}

// plural is n things: "1 path", "3 paths".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func (s *snapshotsTab) doFork() {
	id := s.sandbox
	s.act("Fork", func(ctx context.Context) (string, error) {
		forks, err := s.b.Fork(ctx, owner, id, sandbox.ForkRequest{Count: 1})
		if err != nil {
			return "", err
		}
		names := make([]string, len(forks))
		for i, f := range forks {
			names[i] = f.Name
		}
		return "Forked into " + strings.Join(names, ", ") + ".", nil
	})
}

func (s *snapshotsTab) doDelete() {
	sn, ok := s.current()
	if !ok {
		return
	}
	id := s.sandbox
	s.act("Delete snapshot", func(ctx context.Context) (string, error) {
		return "Deleted snapshot " + sn.ID + ".", s.b.DeleteSnapshot(ctx, owner, id, sn.ID)
	})
}
