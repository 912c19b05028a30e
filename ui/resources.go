package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/engine/sandbox"
)

const mib = 1 << 20

// resourcesTab charts CPU and memory over the last minutes and lists the
// process count and the limits in force.
type resourcesTab struct {
	u        *UI
	cpuTitle *widget.Label
	memTitle *widget.Label
	cpu      *chart
	mem      *chart
	pids     *widget.Label
	limits   *widget.Label
}

func newResourcesTab(u *UI) *resourcesTab {
	bold := fyne.TextStyle{Bold: true}
	r := &resourcesTab{
		u:        u,
		cpuTitle: widget.NewLabelWithStyle("CPU", fyne.TextAlignLeading, bold),
		memTitle: widget.NewLabelWithStyle("Memory", fyne.TextAlignLeading, bold),
		cpu:      newChart(theme.ColorNamePrimary),
		mem:      newChart(theme.ColorNameSuccess),
		pids:     widget.NewLabel(""),
		limits:   widget.NewLabel(""),
	}
	r.limits.Wrapping = fyne.TextWrapWord
	return r
}

func (r *resourcesTab) object() fyne.CanvasObject {
	cpu := container.NewBorder(r.cpuTitle, nil, nil, nil, r.cpu)
	mem := container.NewBorder(r.memTitle, nil, nil, nil, r.mem)
	caption := widget.NewLabel(fmt.Sprintf("Last %d minutes", int(historyWindow.Minutes())))
	facts := container.New(layout.NewFormLayout(),
		widget.NewLabelWithStyle("Processes", fyne.TextAlignTrailing, fyne.TextStyle{Bold: true}), r.pids,
		widget.NewLabelWithStyle("Limits", fyne.TextAlignTrailing, fyne.TextStyle{Bold: true}), r.limits,
	)
	bottom := container.NewVBox(caption, facts)
	return container.NewBorder(nil, bottom, nil, nil, container.NewGridWithColumns(2, cpu, mem))
}

// refresh redraws the charts from the model's history.
func (r *resourcesTab) refresh(info sandbox.Info) {
	cpuTop, memTop := chartScales(info, r.u.m.samples(info.ID))
	setText(r.cpuTitle, fmt.Sprintf("CPU  %s of %s", FormatPercent(info.Stats.CPUPercent), FormatPercent(cpuTop)))
	memText := FormatBytes(info.Stats.MemoryBytes)
	if limit := memoryLimit(info); limit > 0 {
		memText += " of " + FormatBytes(limit)
	}
	setText(r.memTitle, "Memory  "+memText)
	now := r.u.m.snap.Time
	if now.IsZero() {
		now = r.u.now()
	}
	samples := r.u.m.samples(info.ID)
	ago := fmt.Sprintf("%d min ago", int(historyWindow.Minutes()))
	r.cpu.setAxes(FormatPercent(cpuTop), FormatPercent(cpuTop/2), "0%", ago, "now")
	r.mem.setAxes(FormatBytes(uint64(memTop)), FormatBytes(uint64(memTop/2)), "0 B", ago, "now")
	r.cpu.setPoints(chartPoints(samples, now, historyWindow, cpuTop, func(s sample) float64 { return s.cpu }))
	r.mem.setPoints(chartPoints(samples, now, historyWindow, memTop, func(s sample) float64 { return float64(s.mem) }))
	setText(r.pids, PidsText(info))
	setText(r.limits, LimitsText(info.Spec))
}

// setText changes a label's text only when it differs, so an unchanged
// label does not ask for a redraw.
func setText(l *widget.Label, text string) {
	if l.Text != text {
		l.SetText(text)
	}
}

// chartScales picks the values at the top of the CPU and memory charts: the
// limits when there are any, else the peak seen.
func chartScales(info sandbox.Info, samples []sample) (cpuTop, memTop float64) {
	var cpuPeak, memPeak float64
	for _, s := range samples {
		cpuPeak, memPeak = max(cpuPeak, s.cpu), max(memPeak, float64(s.mem))
	}
	cpuTop = max(100, cpuPeak)
	if info.Spec.CPUs > 0 {
		cpuTop = info.Spec.CPUs * 100
	}
	memTop = max(memPeak*1.25, 64*mib)
	if limit := memoryLimit(info); limit > 0 {
		memTop = float64(limit)
	}
	return cpuTop, memTop
}

// memoryLimit is the memory limit Docker reports, else the one created with.
func memoryLimit(info sandbox.Info) uint64 {
	if info.Stats.MemoryLimit > 0 {
		return info.Stats.MemoryLimit
	}
	if info.Spec.MemoryMB > 0 {
		return uint64(info.Spec.MemoryMB) * mib
	}
	return 0
}
