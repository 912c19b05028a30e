package ui

import (
	"image/color"
	"slices"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// chart is a small line chart. Its points are normalised: x from 0 (oldest)
// to 1 (now), y from 0 (bottom) to 1 (top).
type chart struct {
	widget.BaseWidget
	points []fyne.Position
	line   fyne.ThemeColorName
	// axes: the value at the top, the middle and the bottom (with units),
	// and the time at the left and right ends.
	yTop, yMid, yBottom, xLeft, xRight string
}

// setAxes labels the axes; the same labels redraw nothing.
func (c *chart) setAxes(yTop, yMid, yBottom, xLeft, xRight string) {
	if c.yTop == yTop && c.yMid == yMid && c.yBottom == yBottom && c.xLeft == xLeft && c.xRight == xRight {
		return
	}
	c.yTop, c.yMid, c.yBottom, c.xLeft, c.xRight = yTop, yMid, yBottom, xLeft, xRight
	c.Refresh()
}

// Room the axes' labels take: the values at the left, the times below.
const (
	axisLeft   = 64
	axisBottom = 18
)

func newChart(line fyne.ThemeColorName) *chart {
	c := &chart{line: line}
	c.ExtendBaseWidget(c)
	return c
}

// setPoints replaces the plotted points; the same points redraw nothing.
func (c *chart) setPoints(points []fyne.Position) {
	if slices.Equal(points, c.points) {
		return
	}
	c.points = points
	c.Refresh()
}

// MinSize keeps the chart small but readable.
func (c *chart) MinSize() fyne.Size { return fyne.NewSize(220+axisLeft, 90+axisBottom) }

// CreateRenderer draws the chart with canvas rectangles and lines.
func (c *chart) CreateRenderer() fyne.WidgetRenderer {
	r := &chartRenderer{c: c, frame: canvas.NewRectangle(color.Transparent)}
	for i := range r.labels {
		r.labels[i] = canvas.NewText("", color.Transparent)
		r.labels[i].TextSize = theme.CaptionTextSize()
	}
	r.labels[0].Alignment, r.labels[1].Alignment, r.labels[2].Alignment = fyne.TextAlignTrailing, fyne.TextAlignTrailing, fyne.TextAlignTrailing
	r.labels[4].Alignment = fyne.TextAlignTrailing
	r.frame.StrokeWidth = 1
	r.frame.CornerRadius = theme.InputRadiusSize()
	for i := range r.grid {
		r.grid[i] = canvas.NewLine(color.Transparent)
	}
	r.Refresh()
	return r
}

type chartRenderer struct {
	c      *chart
	frame  *canvas.Rectangle
	grid   [3]*canvas.Line
	labels [5]*canvas.Text // y top, middle, bottom; x left, right
	lines  []*canvas.Line
	size   fyne.Size
}

func (r *chartRenderer) Destroy() {}

func (r *chartRenderer) MinSize() fyne.Size { return r.c.MinSize() }

func (r *chartRenderer) Objects() []fyne.CanvasObject {
	objects := []fyne.CanvasObject{r.frame}
	for _, g := range r.grid {
		objects = append(objects, g)
	}
	for _, l := range r.labels {
		objects = append(objects, l)
	}
	for _, l := range r.lines {
		objects = append(objects, l)
	}
	return objects
}

func (r *chartRenderer) Layout(size fyne.Size) {
	r.size = size
	plot := fyne.NewSize(max(0, size.Width-axisLeft), max(0, size.Height-axisBottom))
	r.frame.Move(fyne.NewPos(axisLeft, 0))
	r.frame.Resize(plot)
	for i, g := range r.grid {
		y := plot.Height * float32(i+1) / float32(len(r.grid)+1)
		g.Position1, g.Position2 = fyne.NewPos(axisLeft, y), fyne.NewPos(size.Width, y)
	}
	th := r.labels[0].MinSize().Height
	place := func(t *canvas.Text, x, y, w float32) {
		t.Move(fyne.NewPos(x, y))
		t.Resize(fyne.NewSize(w, th))
	}
	place(r.labels[0], 0, 0, axisLeft-4)
	place(r.labels[1], 0, plot.Height/2-th/2, axisLeft-4)
	place(r.labels[2], 0, plot.Height-th, axisLeft-4)
	place(r.labels[3], axisLeft, plot.Height+2, plot.Width/2)
	place(r.labels[4], axisLeft+plot.Width/2, plot.Height+2, plot.Width/2)
	inset := float32(2)
	w, h := plot.Width-2*inset, plot.Height-2*inset
	at := func(p fyne.Position) fyne.Position {
		return fyne.NewPos(axisLeft+inset+p.X*w, inset+(1-p.Y)*h)
	}
	for i, l := range r.lines {
		if i+1 >= len(r.c.points) { // the points changed since the last Refresh: it comes next
			break
		}
		l.Position1, l.Position2 = at(r.c.points[i]), at(r.c.points[i+1])
	}
}

func (r *chartRenderer) Refresh() {
	v := fyne.CurrentApp().Settings().ThemeVariant()
	th := r.c.Theme()
	r.frame.FillColor = th.Color(theme.ColorNameInputBackground, v)
	r.frame.StrokeColor = th.Color(theme.ColorNameInputBorder, v)
	for _, g := range r.grid {
		g.StrokeColor = th.Color(theme.ColorNameSeparator, v)
		g.StrokeWidth = 1
	}
	for i, text := range []string{r.c.yTop, r.c.yMid, r.c.yBottom, r.c.xLeft, r.c.xRight} {
		r.labels[i].Text = text
		r.labels[i].Color = th.Color(theme.ColorNamePlaceHolder, v)
	}
	want := max(0, len(r.c.points)-1)
	for len(r.lines) < want {
		r.lines = append(r.lines, canvas.NewLine(color.Transparent))
	}
	r.lines = r.lines[:want]
	for _, l := range r.lines {
		l.StrokeColor = th.Color(r.c.line, v)
		l.StrokeWidth = 2
	}
	r.Layout(r.size)
	canvas.Refresh(r.c)
}

// chartPoints places samples on a chart spanning window up to now, with
// top as the value at the chart's top edge. Values are clamped to the chart.
func chartPoints(samples []sample, now time.Time, window time.Duration, top float64, value func(sample) float64) []fyne.Position {
	if top <= 0 {
		top = 1
	}
	points := make([]fyne.Position, 0, len(samples))
	for _, s := range samples {
		age := now.Sub(s.at)
		if age > window {
			continue
		}
		x := 1 - float32(age)/float32(window)
		y := float32(value(s) / top)
		points = append(points, fyne.NewPos(clamp01(x), clamp01(y)))
	}
	return points
}

func clamp01(v float32) float32 {
	return min(1, max(0, v))
}
