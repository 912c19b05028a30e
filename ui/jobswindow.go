package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/widget"
)

// jobsWindow is the Jobs view of every sandbox, in a window of its own.
type jobsWindow struct {
	win  fyne.Window
	view *jobsView
}

// showAllJobs opens the window of every sandbox's background jobs.
func (u *UI) showAllJobs() {
	if u.jobsWin == nil {
		w := &jobsWindow{win: u.app.NewWindow("Sandtray background jobs"), view: newJobsView(u, true)}
		hide := func() {
			w.view.setShown(false)
			w.win.Hide()
		}
		closeBtn := widget.NewButton("Close", hide)
		w.win.SetContent(container.NewBorder(nil, container.NewHBox(layout.NewSpacer(), closeBtn), nil, nil, w.view.object()))
		w.win.Resize(fyne.NewSize(980, 640))
		w.win.SetCloseIntercept(u.guard("closing the Jobs window", hide))
		u.jobsWin = w
	}
	u.jobsWin.win.Show()
	u.jobsWin.win.RequestFocus()
	u.jobsWin.view.setShown(true)
}

// ShowAllJobs opens the Jobs window (all sandboxes).
func (u *UI) ShowAllJobs() { u.showAllJobs() }

// jobs is the backend's jobs.
func (u *UI) jobs() Jobs { return u.b }
