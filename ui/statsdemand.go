package ui

import (
	"slices"

	"fyne.io/fyne/v2/theme"
)

// StatsDemand is what a Backend may also do: sample resource use only for
// the sandboxes the window shows, and none while the window is hidden. The
// rows in view are read now and then (ShowStats); the selected sandbox,
// whose charts move, is followed closely (FollowStats). A Backend without
// it is left to sample as it likes.
type StatsDemand interface {
	ShowStats(ids []string)
	FollowStats(id string)
}

// watchVisibility follows whether the window is on screen: shown by
// ShowWindow or the tray (which focuses it), hidden by its close button
// (the app lives on in the tray; without a tray, closing minimises it,
// as there is no tray to come back from). Runs on Fyne's goroutine, from
// New.
func (u *UI) watchVisibility() {
	closing := u.hideWindow
	if u.opts.NoTray != "" {
		closing = u.closeWithoutTray
	}
	u.win.SetCloseIntercept(u.guard("closing the window", closing))
	u.app.Lifecycle().SetOnEnteredForeground(u.guard("the window coming to the front", func() { u.setShown(true) }))
}

// hideWindow hides the window (the app lives on in the tray) and stops
// sampling for it.
func (u *UI) hideWindow() {
	u.win.Hide()
	u.setShown(false)
}

// setShown records whether the window is on screen, says what to sample,
// and lets Fyne's goroutine sleep while it is hidden (idle.go).
func (u *UI) setShown(shown bool) {
	u.shown = shown
	u.wantStats()
	u.startParking()
}

// wantStats tells the backend which sandboxes' stats the window shows now
// and which one it follows, when that changed. Runs on Fyne's goroutine.
func (u *UI) wantStats() {
	sd, ok := u.b.(StatsDemand)
	if !ok {
		return
	}
	var ids []string
	follow := ""
	if u.shown {
		ids, follow = u.list.inView(), u.m.selected
	}
	if follow != u.statsFollowed {
		u.statsFollowed = follow
		sd.FollowStats(follow)
	}
	if u.statsAsked != nil && slices.Equal(ids, u.statsAsked) {
		return
	}
	u.statsAsked = append([]string{}, ids...)
	sd.ShowStats(ids)
}

// inView lists the sandboxes whose rows are in the list's viewport now.
func (l *sandboxList) inView() []string {
	visible := l.u.m.visible
	if len(visible) == 0 {
		return nil
	}
	if l.u.rowHeight == 0 {
		l.u.rowHeight = l.createRow().MinSize().Height + theme.SeparatorThicknessSize()
	}
	row, size := l.u.rowHeight, l.list.Size()
	if row <= 0 || size.Height <= 0 {
		return nil // not laid out yet: nothing on screen
	}
	first := int(l.list.GetScrollOffset() / row)
	last := min(len(visible), first+int(size.Height/row)+2)
	ids := make([]string, 0, max(0, last-first))
	for _, info := range visible[min(first, len(visible)):last] {
		ids = append(ids, info.ID)
	}
	return ids
}

// rowShown notes that a row came into view (the list scrolled): the stats
// to sample may have changed.
func (l *sandboxList) rowShown() {
	l.u.do(l.u.wantStats) // after the scroll has moved the offset
}
