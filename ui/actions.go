package ui

import (
	"context"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// actionBar holds the buttons that act on the selected sandbox. Each runs
// its backend call off Fyne's goroutine; the outcome appears in the detail
// pane's message line and the next snapshot shows the new state.
type actionBar struct {
	u       *UI
	stop    *widget.Button
	kill    *widget.Button
	del     *widget.Button
	persist *widget.Button
	commit  *widget.Button
	export  *widget.Button
	term    *widget.Button
	// why says why buttons the runtime cannot serve are off (capabilities.go).
	why *widget.Label
}

func newActionBar(u *UI) *actionBar {
	a := &actionBar{u: u}
	a.stop = widget.NewButtonWithIcon("Stop", theme.MediaStopIcon(), a.withSelected(a.doStop))
	a.kill = widget.NewButtonWithIcon("Kill", theme.CancelIcon(), a.withSelected(a.doKill))
	a.del = widget.NewButtonWithIcon("Delete…", theme.DeleteIcon(), a.withSelected(a.confirmDelete))
	a.persist = widget.NewButtonWithIcon("Persist", theme.ConfirmIcon(), a.withSelected(a.togglePersist))
	a.commit = widget.NewButtonWithIcon("Commit…", theme.UploadIcon(), a.withSelected(u.showCommitDialog))
	a.export = widget.NewButtonWithIcon("Dockerfile…", theme.DocumentIcon(), a.withSelected(u.startExport))
	a.term = widget.NewButtonWithIcon("Terminal", theme.ComputerIcon(), a.withSelected(u.openTerminal))
	a.del.Importance = widget.DangerImportance
	a.why = widget.NewLabel("")
	a.why.Wrapping = fyne.TextWrapWord
	a.why.Importance = widget.LowImportance
	a.why.Hide()
	return a
}

func (a *actionBar) object() fyne.CanvasObject {
	return container.NewHBox(a.term, a.stop, a.kill, a.del, a.persist, a.commit, a.export)
}

// withSelected runs an action on the sandbox selected when it is clicked.
func (a *actionBar) withSelected(action func(sandbox.Info)) func() {
	return func() {
		if info, ok := a.u.m.current(); ok {
			action(info)
		}
	}
}

// refresh matches the buttons to the sandbox's state.
func (a *actionBar) refresh(info sandbox.Info) {
	running := info.Status == sandbox.StatusRunning || info.Status == sandbox.StatusPaused
	setEnabled(a.term, info.Status == sandbox.StatusRunning)
	setEnabled(a.stop, running)
	setEnabled(a.kill, running)
	cannot := a.u.lacking(capCommit)
	setEnabled(a.commit, cannot == "" && info.Status != sandbox.StatusMissing)
	setEnabled(a.export, cannot == "" && info.Status != sandbox.StatusMissing)
	showWhy(a.why, "Commit… and Dockerfile… are off", cannot)
	text, icon := "Persist", theme.ConfirmIcon()
	if info.Persistent {
		text, icon = "Make ephemeral", theme.HistoryIcon()
	}
	if a.persist.Text != text {
		a.persist.SetText(text)
		a.persist.SetIcon(icon)
	}
}

func setEnabled(b *widget.Button, on bool) {
	if on && b.Disabled() {
		b.Enable()
	} else if !on && !b.Disabled() {
		b.Disable()
	}
}

// act runs a backend call for a sandbox and reports how it went.
func (u *UI) act(what string, work func(ctx context.Context) error, success string) {
	u.detail.showProgress(what + "…")
	u.background(work, func(err error) {
		if err != nil {
			u.detail.showError(what, err)
			return
		}
		u.detail.showInfo(success)
	})
}

func (a *actionBar) doStop(info sandbox.Info) {
	a.u.act("Stop "+info.Name, func(ctx context.Context) error {
		_, err := a.u.b.Stop(ctx, owner, info.ID)
		return err
	}, "Stopped "+info.Name+". Its files stay; the next command starts it again.")
}

func (a *actionBar) doKill(info sandbox.Info) {
	a.u.act("Kill "+info.Name, func(ctx context.Context) error {
		return a.u.b.Kill(ctx, info.ID)
	}, "Killed everything running in "+info.Name+".")
}

func (a *actionBar) confirmDelete(info sandbox.Info) {
	d := dialog.NewConfirm("Delete "+info.Name+"?",
		"This removes the sandbox, its files and its activity log.\nIt cannot be undone.",
		func(ok bool) {
			if !ok {
				return
			}
			a.u.act("Delete "+info.Name, func(ctx context.Context) error {
				return a.u.b.Delete(ctx, owner, info.ID)
			}, "Deleted "+info.Name+".")
		}, a.u.win)
	d.SetConfirmText("Delete")
	d.SetDismissText("Cancel")
	d.SetConfirmImportance(widget.DangerImportance)
	d.Show()
}

func (a *actionBar) togglePersist(info sandbox.Info) {
	want := !info.Persistent
	done := info.Name + " is now persistent: it stays until you delete it."
	if !want {
		done = info.Name + " is now ephemeral: it goes after its session ends or it idles."
	}
	a.u.act("Change "+info.Name, func(ctx context.Context) error {
		_, err := a.u.b.SetPersistent(ctx, owner, info.ID, want)
		return err
	}, done)
}
