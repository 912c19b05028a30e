package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

func TestTmpLabel(t *testing.T) {
	a := test.NewTempApp(t)
	for _, c := range []struct {
		name string
		text string
		wrap fyne.TextWrap
	}{
		{"200 lines wrap", strings.Repeat("line of a normal build log, compiling module number xxxx\n", 200), fyne.TextWrapBreak},
		{"500 lines wrap", strings.Repeat("line of a normal build log, compiling module number xxxx\n", 500), fyne.TextWrapBreak},
		{"200 lines nowrap", strings.Repeat("line of a normal build log, compiling module number xxxx\n", 200), fyne.TextWrapOff},
		{"16K one line wrap", strings.Repeat("y", 16<<10), fyne.TextWrapBreak},
		{"4K one line wrap", strings.Repeat("y", 4<<10), fyne.TextWrapBreak},
		{"16K one line nowrap", strings.Repeat("y", 16<<10), fyne.TextWrapOff},
	} {
		w := a.NewWindow("x")
		l := widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
		l.Wrapping = c.wrap
		w.SetContent(container.NewVScroll(l))
		w.Resize(fyne.NewSize(700, 500))
		start := time.Now()
		l.SetText(c.text)
		set := time.Since(start)
		_ = w.Canvas().Capture()
		t.Logf("%s: set %v, total %v", c.name, set, time.Since(start))
		w.Close()
	}
}
