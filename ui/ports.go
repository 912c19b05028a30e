package ui

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// gpuReporter is a Backend that can tell whether Docker can give sandboxes
// GPUs; the engine is one.
type gpuReporter interface {
	GPUStatus(ctx context.Context) sandbox.GPUStatus
}

// gpuAskTimeout bounds asking the engine about GPUs.
const gpuAskTimeout = 10 * time.Second

// PortLine is how the Details tab names one forward: "8000 → http://127.0.0.1:41234/".
func PortLine(p sandbox.PortForward) string {
	return fmt.Sprintf("%d → %s", p.Port, p.URL)
}

// GPUText is the Details tab's GPUs row: what the sandbox holds, then
// whether the Docker host has GPUs at all (known false while not yet asked).
func GPUText(spec sandbox.Spec, host sandbox.GPUStatus, known bool) string {
	held := "None"
	switch {
	case spec.GPUs == sandbox.GPUsAll:
		held = "All of the host's GPUs"
	case spec.GPUs != "" && spec.GPUs != "0":
		held = spec.GPUs + " GPU"
		if spec.GPUs != "1" {
			held += "s"
		}
	}
	switch {
	case !known:
		return held
	case host.Available:
		return held + " · this Docker host has GPUs (" + host.Method + ")"
	default:
		return held + " · no GPUs on this Docker host: " + host.Detail
	}
}

// GPUHolders names the sandboxes that hold GPUs, for the GPU line.
func GPUHolders(boxes []sandbox.Info) []string {
	var out []string
	for _, b := range boxes {
		if b.Spec.GPUs != "" && b.Spec.GPUs != "0" {
			out = append(out, b.Name+" ("+b.Spec.GPUs+")")
		}
	}
	slices.Sort(out)
	return out
}

// portsView is the Details tab's Ports row: one line per forward with an
// Open button (the default browser) and a Copy button for its URL.
type portsView struct {
	u     *UI
	box   *fyne.Container
	shown []sandbox.PortForward

	mu       sync.Mutex // guards gpu, gpuKnown and asking
	gpu      sandbox.GPUStatus
	gpuKnown bool
	asking   bool
}

func newPortsView(u *UI) *portsView {
	return &portsView{u: u, box: container.NewVBox(widget.NewLabel(noPorts))}
}

// noPorts is the Ports row of a sandbox with no forwards.
const noPorts = "None. An assistant's expose_port makes a server in the sandbox reachable here."

func (p *portsView) object() fyne.CanvasObject { return p.box }

// refresh shows info's forwards, rebuilding the rows only when they changed.
func (p *portsView) refresh(info sandbox.Info) {
	if slices.Equal(p.shown, info.Ports) && len(p.box.Objects) > 0 {
		return
	}
	p.shown = slices.Clone(info.Ports)
	p.box.RemoveAll()
	if len(info.Ports) == 0 {
		p.box.Add(widget.NewLabel(noPorts))
		return
	}
	for _, fw := range info.Ports {
		label := widget.NewLabel(PortLine(fw))
		label.Selectable = true
		label.TextStyle.Monospace = true
		open := widget.NewButtonWithIcon("Open", theme.ComputerIcon(), func() { p.open(fw.URL) })
		open.Importance = widget.HighImportance
		cp := widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), func() { p.copyURL(fw.URL) })
		p.box.Add(container.NewBorder(nil, nil, nil, container.NewHBox(open, cp), label))
	}
}

func (p *portsView) open(raw string) {
	u, err := url.Parse(raw)
	if err == nil {
		err = p.u.openURL(u)
	}
	if err != nil { // no browser to open it with (no xdg-open): the URL still works, pasted
		p.u.app.Clipboard().SetContent(raw)
		p.u.detail.showWarning("Could not open a browser here (" + err.Error() + "); copied “" + raw + "” to the clipboard instead: paste it into your browser.")
		return
	}
	p.u.detail.showInfo("Opened " + raw + " in the default browser.")
}

func (p *portsView) copyURL(raw string) {
	p.u.app.Clipboard().SetContent(raw)
	p.u.detail.showInfo("Copied “" + raw + "” to the clipboard.")
}

// gpuText is the GPUs row for info, and whether GPUs matter here: the
// sandbox holds some, another does, or the Docker host has them (a host
// without GPUs gets no row, not a paragraph on what to install). The first
// call asks the engine about GPUs off Fyne's goroutine; the row shows the
// answer at the next refresh.
func (p *portsView) gpuText(info sandbox.Info) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	text := GPUText(info.Spec, p.gpu, p.gpuKnown)
	holders := GPUHolders(p.u.m.snap.Sandboxes)
	if len(holders) > 0 {
		text += "\nHolding GPUs: " + strings.Join(holders, ", ")
	}
	matter := len(holders) > 0 || (p.gpuKnown && p.gpu.Available)
	r, ok := p.u.b.(gpuReporter)
	if !p.gpuKnown && !p.asking && ok {
		p.asking = true
		p.u.goSafe("asking about GPUs", func() { p.askGPU(r) })
	}
	return text, matter
}

// askGPU asks the engine once; it ends within gpuAskTimeout.
func (p *portsView) askGPU(r gpuReporter) {
	ctx, cancel := context.WithTimeout(context.Background(), gpuAskTimeout)
	defer cancel()
	st := r.GPUStatus(ctx)
	p.mu.Lock()
	p.gpu, p.gpuKnown, p.asking = st, true, false
	p.mu.Unlock()
	p.u.do(p.u.detail.refresh)
}
