package ui

import (
	"context"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Diagnoser runs `sandtray doctor`'s checks for Help → Diagnose; the host
// passes app/doctor behind it.
type Diagnoser interface {
	// Diagnose returns the report, one line per check, and whether
	// Sandtray can work. It may take seconds (it asks Docker).
	Diagnose(ctx context.Context) (report string, ok bool)
}

// addHelpMenu adds the Help menu to the menu bar (help.go).
func (u *UI) addHelpMenu() {
	u.addMenu(fyne.NewMenu("Help", u.helpItems()...))
}

// DiagnosisTitle is the dialog's title for a report: a person sees at once
// whether something needs fixing.
func DiagnosisTitle(ok bool) string {
	if ok {
		return "Diagnosis: Sandtray can work"
	}
	return "Diagnosis: something needs fixing"
}

// showDiagnosis runs the checks off Fyne's goroutine and shows the report
// in a dialog with a monospace, selectable text.
func (u *UI) showDiagnosis() {
	text := widget.NewMultiLineEntry()
	text.TextStyle = fyne.TextStyle{Monospace: true}
	text.Wrapping = fyne.TextWrapWord
	text.SetText("Checking Docker, the image, gVisor, the socket, MCP clients and the config…")
	scroll := container.NewScroll(text)
	scroll.SetMinSize(fyne.NewSize(820, 420))
	heading := widget.NewLabelWithStyle("Diagnosing…", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	copyBtn := widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), func() { u.app.Clipboard().SetContent(text.Text) })
	top := container.NewBorder(nil, nil, nil, copyBtn, heading)
	dialog.NewCustom("Diagnosis", "Close", container.NewBorder(top, nil, nil, nil, scroll), u.win).Show()
	var report string
	var ok bool
	u.background(func(ctx context.Context) error {
		report, ok = u.opts.Diagnose.Diagnose(ctx)
		return nil
	}, func(error) {
		text.SetText(report)
		heading.SetText(DiagnosisTitle(ok))
	})
}
