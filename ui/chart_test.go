package ui

import (
	"testing"

	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
)

// TestChartsHaveAxesWithUnits: the Resources charts label their value axis
// with units (CPU in % of a core up to the limit, memory in bytes up to
// the limit) and their time axis from five minutes ago to now.
func TestChartsHaveAxesWithUnits(t *testing.T) {
	h := selected(t, alpha)
	selectTab(h, "Resources")
	r := h.u.detail.resources
	if got := []string{r.cpu.yTop, r.cpu.yMid, r.cpu.yBottom, r.cpu.xLeft, r.cpu.xRight}; got[0] != "100%" || got[1] != "50.0%" || got[2] != "0%" || got[3] != "5 min ago" || got[4] != "now" {
		t.Errorf("CPU axes %q", got)
	}
	if r.mem.yTop != "512 MiB" || r.mem.yMid != "256 MiB" || r.mem.yBottom != "0 B" {
		t.Errorf("memory axes %q, %q, %q", r.mem.yTop, r.mem.yMid, r.mem.yBottom)
	}
	var shown []string
	for _, o := range test.LaidOutObjects(r.cpu) {
		if txt, ok := o.(*canvas.Text); ok && txt.Text != "" {
			shown = append(shown, txt.Text)
		}
	}
	if len(shown) != 5 {
		t.Errorf("the CPU chart draws %q; want its five axis labels", shown)
	}
}
