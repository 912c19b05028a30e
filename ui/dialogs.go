package ui

import (
	"context"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/serve/control"
)

// commitDialog asks for an image name and commits the sandbox to it, showing
// progress and any error in place so the person can fix the name and retry.
type commitDialog struct {
	u         *UI
	info      sandbox.Info
	image     *widget.Entry
	overwrite *widget.Check
	progress  *widget.ProgressBar
	status    *widget.Label
	problem   *widget.Label
	commit    *widget.Button
	cancel    *widget.Button
	dlg       *dialog.CustomDialog
}

// DefaultImageName suggests a repo:tag for committing a sandbox; the engine
// saves it under its namespace (commit.namespace, sandtray-local/).
func DefaultImageName(name string) string {
	repo := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, name)
	if repo == "" {
		repo = "sandbox"
	}
	return repo + ":latest"
}

func (u *UI) showCommitDialog(info sandbox.Info) {
	c := &commitDialog{u: u, info: info}
	c.image = widget.NewEntry()
	c.image.SetText(DefaultImageName(info.Name))
	c.image.SetPlaceHolder("repository:tag")
	c.overwrite = widget.NewCheck("Replace the tag if Sandtray committed the image it names", nil)
	c.progress = widget.NewProgressBar()
	c.progress.Hide()
	c.status = widget.NewLabel("")
	c.status.Hide()
	c.problem = widget.NewLabel("")
	c.problem.Importance = widget.DangerImportance
	c.problem.Wrapping = fyne.TextWrapWord
	c.problem.Hide()
	intro := widget.NewLabel("Save " + info.Name + "'s files as a new Docker image. It goes under Sandtray's own namespace: " +
		"name:tag is saved as sandtray-local/name:tag (commit.namespace in config.toml).")
	intro.Wrapping = fyne.TextWrapWord
	content := container.NewVBox(intro, widget.NewForm(widget.NewFormItem("Image", c.image)),
		c.overwrite, c.progress, c.status, c.problem)
	c.cancel = widget.NewButton("Cancel", func() { c.dlg.Hide() })
	c.commit = widget.NewButton("Commit", c.start)
	c.commit.Importance = widget.HighImportance
	c.dlg = dialog.NewCustomWithoutButtons("Commit "+info.Name+" to an image", content, u.win)
	c.dlg.SetButtons([]fyne.CanvasObject{c.cancel, c.commit})
	c.fit() // before Show, so the dialog is centred at its full width
	c.dlg.Show()
}

// start runs the commit; the dialog stays open until it succeeds.
func (c *commitDialog) start() {
	req := sandbox.CommitRequest{Image: strings.TrimSpace(c.image.Text), Overwrite: c.overwrite.Checked}
	if req.Image == "" {
		c.fail("Type an image name such as myimage:latest.")
		return
	}
	c.problem.Hide()
	c.commit.Disable()
	c.image.Disable()
	c.progress.SetValue(0)
	c.progress.Show()
	c.status.SetText("Committing…")
	c.status.Show()
	c.fit()
	var res sandbox.CommitResult
	progress := func(current, total float64, message string) {
		c.u.do(func() { c.report(current, total, message) })
	}
	c.u.background(func(ctx context.Context) (err error) {
		res, err = c.u.b.Commit(ctx, owner, c.info.ID, req, progress)
		return err
	}, func(err error) {
		if err != nil {
			c.fail("Commit failed: " + err.Error())
			return
		}
		c.dlg.Hide()
		c.u.detail.showInfo("Committed " + c.info.Name + " to " + res.Image + " (" + ShortID(strings.TrimPrefix(res.ImageID, "sha256:")) + ").")
	})
}

// fit sizes the dialog to its content as parts of it show and hide.
func (c *commitDialog) fit() {
	c.dlg.Resize(fyne.NewSize(520, c.dlg.MinSize().Height))
}

func (c *commitDialog) report(current, total float64, message string) {
	if total > 0 {
		c.progress.SetValue(min(1, current/total))
	}
	if message != "" {
		c.status.SetText(message)
	}
}

func (c *commitDialog) fail(text string) {
	c.progress.Hide()
	c.status.Hide()
	c.problem.SetText(text)
	c.problem.Show()
	c.commit.Enable()
	c.image.Enable()
	c.fit()
}

// startExport fetches the Dockerfile that rebuilds the sandbox and shows it.
func (u *UI) startExport(info sandbox.Info) {
	var exp sandbox.Export
	u.detail.showProgress("Writing a Dockerfile for " + info.Name + "…")
	u.background(func(ctx context.Context) (err error) {
		exp, err = u.b.ExportDockerfile(ctx, owner, info.ID, "")
		return err
	}, func(err error) {
		if err != nil {
			u.detail.showError("Export "+info.Name, err)
			return
		}
		u.detail.clearMessage()
		u.showExportDialog(info, exp)
	})
}

// showExportDialog previews a Dockerfile with a button to save it, and its
// build context, into a folder the person picks.
func (u *UI) showExportDialog(info sandbox.Info, exp sandbox.Export) {
	text := widget.NewLabelWithStyle(exp.Dockerfile, fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	text.Selectable = true
	outcome := widget.NewLabel("")
	outcome.Wrapping = fyne.TextWrapWord
	outcome.Hide()
	scroll := container.NewScroll(text)
	scroll.SetMinSize(fyne.NewSize(640, 360))
	var dlg *dialog.CustomDialog
	save := widget.NewButton("Save to folder…", func() {
		u.pickFolder("Save the Dockerfile into folder", func(dir string) {
			var saved sandbox.Export
			u.background(func(ctx context.Context) (err error) {
				saved, err = u.b.SaveDockerfile(ctx, info.ID, dir)
				return err
			}, func(err error) {
				outcome.Importance = widget.SuccessImportance
				outcome.SetText(ExportText(saved))
				if err != nil {
					outcome.Importance = widget.DangerImportance
					outcome.SetText("Could not save: " + err.Error())
				}
				outcome.Show()
			})
		})
	})
	save.Importance = widget.HighImportance
	closeBtn := widget.NewButton("Close", func() { dlg.Hide() })
	dlg = dialog.NewCustomWithoutButtons("Dockerfile for "+info.Name, container.NewBorder(nil, outcome, nil, nil, scroll), u.win)
	dlg.SetButtons([]fyne.CanvasObject{closeBtn, save})
	dlg.Show()
}

// Busy is what a Backend may also say: what runs in the engine now, which
// the quit dialog names (control.GUIClient does).
type Busy interface {
	Busy() control.Busy
}

// confirmQuit asks before quitting, in one dialog for the app that runs
// the engine and the app attached to one: what runs now (assistants
// connected, calls in flight), what quitting does to it, and for the
// engine's own app whether to stop the ephemeral sandboxes.
func (u *UI) confirmQuit() {
	u.ShowWindow()
	var busy control.Busy
	known := false
	u.background(func(context.Context) error {
		if b, ok := u.b.(Busy); ok {
			busy, known = b.Busy(), true
		}
		return nil
	}, func(error) { u.showQuitDialog(busy, known) })
}

// QuitText is what the quit dialog says: what runs now, and what quitting
// does to it.
func QuitText(busy control.Busy, known, attached bool) string {
	now := ""
	if known {
		now = "Now: " + busy.String() + ". "
	}
	if attached {
		return now + "The Sandtray engine your assistants started keeps running, and so do its sandboxes and calls: only this window closes."
	}
	if known && busy.Calls > 0 {
		return now + "Quitting ends the calls running, and assistants lose Sandtray until it runs again."
	}
	return now + "Assistants lose Sandtray until it runs again."
}

func (u *UI) showQuitDialog(busy control.Busy, known bool) {
	title := "Quit Sandtray?"
	if u.opts.Attached {
		title = "Quit the Sandtray app?"
	}
	msg := widget.NewLabel(QuitText(busy, known, u.opts.Attached))
	msg.Wrapping = fyne.TextWrapWord
	body := container.NewVBox(msg)
	stop := widget.NewCheck("Stop ephemeral sandboxes (persistent ones stay)", nil)
	stop.SetChecked(true)
	if !u.opts.Attached {
		body.Add(stop)
	}
	d := dialog.NewCustomConfirm(title, "Quit", "Cancel", body, func(ok bool) {
		if ok && u.opts.Quit != nil {
			u.opts.Quit(!u.opts.Attached && stop.Checked)
		}
	}, u.win)
	d.Resize(fyne.NewSize(480, d.MinSize().Height))
	d.Show()
}
