package ui

import (
	"context"
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/serve/control"
)

// activityTail is how many activity entries the tab keeps, and
// activityKeep how much of each output it fetches: its end (the whole of an
// entry is fetched when asked for, outputView's link).
const (
	activityTail = 500
	activityKeep = 64 << 10
)

// activityTab lists every tool call that touched the sandbox, newest last,
// and shows one in full: the chosen one, or the newest while following.
type activityTab struct {
	u        *UI
	search   *widget.Entry
	follow   *widget.Check
	list     *widget.List
	title    *widget.Label
	output   *outputView
	copyBtn  *widget.Button
	entries  []control.LogEntry
	matches  []int // indexes into entries that the search matches
	chosen   int   // index into entries, -1 for "the newest"
	loadedID string
	gen      int // bumped by reset: a fetch for what was shown before is dropped
	inflight bool
	again    bool
	// onNew hears of the entries that came after the first fetch of a
	// sandbox: calls that may have written files or taken snapshots.
	onNew func(id string, entries []control.LogEntry)
}

func newActivityTab(u *UI) *activityTab {
	t := &activityTab{u: u, chosen: -1}
	t.search = widget.NewEntry()
	t.search.SetPlaceHolder("Search commands and output")
	t.search.OnChanged = func(string) { t.rematch() }
	t.follow = widget.NewCheck("Follow", func(on bool) {
		if on {
			t.chosen = -1
			t.list.UnselectAll()
			t.rematch()
		}
	})
	t.follow.Checked = true
	t.list = widget.NewList(func() int { return len(t.matches) }, t.createRow, t.updateRow)
	t.list.OnSelected = func(id widget.ListItemID) {
		if _, ok := t.entryAt(id); ok {
			t.chosen = t.matches[id]
			t.follow.SetChecked(false)
			t.showChosen()
		}
	}
	t.title = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	t.title.Truncation = fyne.TextTruncateEllipsis
	t.output = newOutputView(u)
	t.copyBtn = widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), t.copyEntry)
	return t
}

func (t *activityTab) object() fyne.CanvasObject {
	top := container.NewBorder(nil, nil, nil, t.follow, t.search)
	entryTop := container.NewBorder(nil, nil, nil, t.copyBtn, t.title)
	entry := container.NewBorder(entryTop, nil, nil, nil, t.output.object())
	split := container.NewHSplit(t.list, entry)
	split.Offset = 0.42
	return container.NewBorder(top, nil, nil, nil, split)
}

func (t *activityTab) createRow() fyne.CanvasObject {
	title := widget.NewLabel("")
	title.Truncation = fyne.TextTruncateEllipsis
	input := widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	input.Truncation = fyne.TextTruncateEllipsis
	return container.NewVBox(title, input)
}

func (t *activityTab) updateRow(id widget.ListItemID, o fyne.CanvasObject) {
	a, ok := t.entryAt(id)
	if !ok {
		return
	}
	labels := o.(*fyne.Container).Objects
	title := labels[0].(*widget.Label)
	title.Importance = widget.MediumImportance
	if a.TimedOut || a.Error != "" || (a.ExitCode != nil && *a.ExitCode != 0) {
		title.Importance = widget.DangerImportance
	}
	title.SetText(ActivityTitle(a))
	labels[1].(*widget.Label).SetText(FirstLine(a.Input, 200))
}

// entryAt is the entry list row id shows, if the row is still there: the
// list may redraw a row it counted before the entries changed.
func (t *activityTab) entryAt(id widget.ListItemID) (sandbox.Activity, bool) {
	if id < 0 || id >= len(t.matches) || t.matches[id] < 0 || t.matches[id] >= len(t.entries) {
		return sandbox.Activity{}, false
	}
	return t.entries[t.matches[id]].Activity, true
}

// reset forgets the previous sandbox's entries, and the matches into them,
// before the list redraws.
func (t *activityTab) reset() {
	t.entries, t.matches, t.loadedID, t.chosen = nil, nil, "", -1
	t.gen++
	t.list.UnselectAll()
	t.follow.SetChecked(true)
	t.rematch()
}

// refresh fetches what the sandbox's log has that the tab has not: the
// entries after its newest (all of them for a sandbox just chosen).
// Fetches never overlap: one asked for while another runs happens when it
// ends.
func (t *activityTab) refresh(info sandbox.Info) {
	if t.inflight {
		t.again = true
		return
	}
	t.inflight = true
	id, gen := info.ID, t.gen
	q := control.LogsQuery{Tail: activityTail, Keep: activityKeep}
	more := id == t.loadedID // what comes now is new since the last fetch
	if more && len(t.entries) > 0 {
		q.After = t.entries[len(t.entries)-1].Time
	}
	var entries []control.LogEntry
	t.u.background(func(ctx context.Context) (err error) {
		entries, err = t.u.b.Logs(ctx, id, q)
		return err
	}, func(err error) {
		t.inflight = false
		if cur, ok := t.u.m.current(); ok && cur.ID == id && err == nil && gen == t.gen {
			if !more {
				t.show(id, entries)
			} else if len(entries) > 0 {
				t.add(entries)
				if t.onNew != nil {
					t.onNew(id, entries)
				}
			}
		}
		if t.again {
			t.again = false
			if cur, ok := t.u.m.current(); ok {
				t.refresh(cur)
			}
		}
	})
}

func (t *activityTab) show(id string, entries []control.LogEntry) {
	t.loadedID, t.entries = id, entries
	t.rematch()
}

// add appends the entries that came after the newest shown, keeping the
// newest activityTail; a chosen entry stays chosen while it is kept.
func (t *activityTab) add(entries []control.LogEntry) {
	all := append(t.entries, entries...)
	if drop := len(all) - activityTail; drop > 0 {
		all = append([]control.LogEntry(nil), all[drop:]...)
		if t.chosen >= 0 {
			t.chosen -= drop // -1 or less: dropped, and the newest shows
			if t.chosen < 0 {
				t.chosen = -1
			}
		}
	}
	t.entries = all
	t.rematch()
}

func (t *activityTab) rematch() {
	t.matches = MatchActivity(t.entries, t.search.Text)
	t.list.Refresh()
	row := -1
	for r, i := range t.matches {
		if i == t.chosen {
			row = r
		}
	}
	if row >= 0 {
		t.list.Select(row)
	} else {
		t.list.UnselectAll()
	}
	if t.follow.Checked {
		t.list.ScrollToBottom()
	}
	t.showChosen()
}

// showChosen fills the right-hand side with the chosen entry, or the newest
// match while following.
func (t *activityTab) showChosen() {
	i := t.chosen
	if i < 0 || i >= len(t.entries) {
		i = -1
		if n := len(t.matches); n > 0 {
			i = t.matches[n-1]
		}
	}
	if i < 0 {
		setText(t.title, "No activity yet")
		t.output.clear()
		t.copyBtn.Disable()
		return
	}
	e := t.entries[i]
	setText(t.title, fmt.Sprintf("Entry %d of %d", i+1, len(t.entries)))
	missing := e.StdoutBytes - len(e.Stdout) + e.StderrBytes - len(e.Stderr)
	id, at := t.loadedID, e.Time
	name := e.Tool
	if info, ok := t.u.m.find(id); ok {
		name = info.Name + "-" + e.Tool
	}
	t.output.showTail(ActivityText(e.Activity), missing, name, func(ctx context.Context) (string, error) {
		a, err := t.u.b.ActivityEntry(ctx, id, at)
		return ActivityText(a), err
	})
	t.copyBtn.Enable()
}

// copyEntry copies the entry shown, as the tab has it (its outputs' ends
// when they are long: the full log has the rest).
func (t *activityTab) copyEntry() {
	i := t.chosen
	if i < 0 || i >= len(t.entries) {
		if n := len(t.matches); n > 0 {
			i = t.matches[n-1]
		}
	}
	if i >= 0 && i < len(t.entries) {
		t.u.app.Clipboard().SetContent(ActivityText(t.entries[i].Activity))
	}
}
