package ui

import (
	"context"
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// activityTail is how many activity entries the tab fetches.
const activityTail = 500

// activityTab lists every tool call that touched the sandbox, newest last,
// and shows one in full: the chosen one, or the newest while following.
type activityTab struct {
	u        *UI
	search   *widget.Entry
	follow   *widget.Check
	list     *widget.List
	title    *widget.Label
	text     *widget.Label
	copyBtn  *widget.Button
	entries  []sandbox.Activity
	matches  []int // indexes into entries that the search matches
	chosen   int   // index into entries, -1 for "the newest"
	loadedID string
	inflight bool
	again    bool
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
	t.text = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	t.text.Wrapping = fyne.TextWrapBreak
	t.copyBtn = widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), t.copyEntry)
	return t
}

func (t *activityTab) object() fyne.CanvasObject {
	top := container.NewBorder(nil, nil, nil, t.follow, t.search)
	entryTop := container.NewBorder(nil, nil, nil, t.copyBtn, t.title)
	entry := container.NewBorder(entryTop, nil, nil, nil, container.NewVScroll(t.text))
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
	if id < 0 || id >= len(t.matches) || t.matches[id] >= len(t.entries) {
		return sandbox.Activity{}, false
	}
	return t.entries[t.matches[id]], true
}

// reset forgets the previous sandbox's entries, and the matches into them,
// before the list redraws.
func (t *activityTab) reset() {
	t.entries, t.matches, t.loadedID, t.chosen = nil, nil, "", -1
	t.list.UnselectAll()
	t.follow.SetChecked(true)
	t.rematch()
}

// refresh fetches the sandbox's log again. Fetches never overlap: one asked
// for while another runs happens when it ends.
func (t *activityTab) refresh(info sandbox.Info) {
	if t.inflight {
		t.again = true
		return
	}
	t.inflight = true
	id := info.ID
	var entries []sandbox.Activity
	t.u.background(func(ctx context.Context) (err error) {
		entries, err = t.u.b.Logs(ctx, id, activityTail)
		return err
	}, func(err error) {
		t.inflight = false
		if cur, ok := t.u.m.current(); ok && cur.ID == id && err == nil {
			t.show(id, entries)
		}
		if t.again {
			t.again = false
			if cur, ok := t.u.m.current(); ok {
				t.refresh(cur)
			}
		}
	})
}

func (t *activityTab) show(id string, entries []sandbox.Activity) {
	if id == t.loadedID && sameActivity(t.entries, entries) {
		return
	}
	t.loadedID, t.entries = id, entries
	t.rematch()
}

// sameActivity tells whether a fetched log differs from the one shown; the
// log only grows at its end and drops entries at its start.
func sameActivity(a, b []sandbox.Activity) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || (a[0].Time.Equal(b[0].Time) && a[len(a)-1].Time.Equal(b[len(b)-1].Time))
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
		t.title.SetText("No activity yet")
		t.text.SetText("")
		t.copyBtn.Disable()
		return
	}
	a := t.entries[i]
	t.title.SetText(fmt.Sprintf("Entry %d of %d", i+1, len(t.entries)))
	t.text.SetText(ActivityText(a))
	t.copyBtn.Enable()
}

func (t *activityTab) copyEntry() {
	t.u.app.Clipboard().SetContent(t.text.Text)
}
