package ui

import (
	"fmt"
	"slices"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// column is one column of the sandbox list: a header, a minimum width and
// whether it takes a share of spare width.
type column struct {
	title string
	width float32
	grow  bool
}

var listColumns = []column{
	{"Name", 140, true}, {"Image", 160, true}, {"Status", 80, false}, {"Owner", 120, true},
	{"Lifetime", 90, false}, {"Age", 70, false}, {"CPU", 64, false}, {"Memory", 150, false}, {"Ports", 190, true},
}

// sandboxList is the filter bar and the live list of sandboxes.
type sandboxList struct {
	u      *UI
	query  *widget.Entry
	status *widget.Select
	count  *widget.Label
	list   *widget.List
	empty  *widget.Label
	// connect offers the Clients window while the list is empty and no
	// assistant has Sandtray in its config (noClient).
	connect  *widget.Button
	noClient bool
	bar      *fyne.Container
	// syncing is set while the list's selection is set from the model, so
	// the selection callback does not echo back.
	syncing bool
	// drawn is what the rows showed when last refreshed (every column of
	// every row, then the selected row), so a snapshot that changes none of
	// it redraws nothing; redraws counts the refreshes that did redraw.
	drawn   []string
	redraws int
	headers []*widget.Button // one per column: a click sorts by it
}

func newSandboxList(u *UI) *sandboxList {
	l := &sandboxList{u: u, count: widget.NewLabel("")}
	l.query = widget.NewEntry()
	l.query.SetPlaceHolder("Filter by name, image, owner or id")
	l.query.OnChanged = func(q string) { u.m.setQuery(q); l.refresh() }
	l.status = widget.NewSelect(statusFilters, func(s string) { u.m.setStatus(s); l.refresh() })
	l.status.Selected = statusFilters[0]
	l.list = widget.NewList(func() int { return len(u.m.visible) }, l.createRow, l.updateRow)
	l.list.OnSelected = l.selected
	l.list.OnUnselected = func(widget.ListItemID) {
		if !l.syncing {
			u.selectSandbox("")
		}
	}
	l.empty = widget.NewLabel("No sandboxes yet. When an assistant runs code, its sandbox appears here.")
	l.empty.Alignment = fyne.TextAlignCenter
	l.empty.Wrapping = fyne.TextWrapWord
	l.connect = widget.NewButtonWithIcon("Connect an assistant…", theme.ContentAddIcon(), u.showClients)
	l.connect.Importance = widget.HighImportance
	l.connect.Hide()
	return l
}

// filterBar is the row above the list: text filter, status filter, count.
func (l *sandboxList) filterBar() fyne.CanvasObject {
	l.bar = container.NewBorder(nil, nil, nil, container.NewHBox(l.status, l.count), l.query)
	return l.bar
}

// object is the header row above the list.
func (l *sandboxList) object() fyne.CanvasObject {
	header := container.New(&columnsLayout{cols: listColumns})
	l.headers = nil
	for _, c := range listColumns {
		h := widget.NewButton(c.title, func() { l.sortBy(c.title) })
		h.Alignment = widget.ButtonAlignLeading
		h.Importance = widget.LowImportance
		l.headers = append(l.headers, h)
		header.Add(h)
	}
	l.markSort()
	return container.NewBorder(header, nil, nil, nil, container.NewStack(l.list,
		container.NewVBox(l.empty, container.NewCenter(l.connect))))
}

func (l *sandboxList) createRow() fyne.CanvasObject {
	row := container.New(&columnsLayout{cols: listColumns})
	for range listColumns {
		cell := widget.NewLabel("")
		cell.Truncation = fyne.TextTruncateEllipsis
		row.Add(cell)
	}
	return row
}

func (l *sandboxList) updateRow(id widget.ListItemID, o fyne.CanvasObject) {
	if id >= len(l.u.m.visible) {
		return
	}
	info := l.u.m.visible[id]
	l.rowShown()
	cells := o.(*fyne.Container).Objects
	for i, text := range rowTexts(info, l.u.now()) {
		cell := cells[i].(*widget.Label)
		cell.Importance = widget.MediumImportance
		if i == 2 {
			cell.Importance = statusImportance(info.Status)
		}
		cell.SetText(text)
	}
}

// rowTexts is what the list shows for a sandbox, one string per column.
func rowTexts(info sandbox.Info, now time.Time) []string {
	lifetime := "Ephemeral"
	if info.Persistent {
		lifetime = "Persistent"
	}
	cpu, mem := placeholder, placeholder
	if info.Status == sandbox.StatusRunning {
		cpu, mem = FormatPercent(info.Stats.CPUPercent), FormatMemory(info.Stats)
	}
	return []string{info.Name, info.Image, StatusText(info.Status), OwnerName(info.Owner),
		lifetime, FormatAge(now, info.CreatedAt), cpu, mem, PortsText(info.Ports)}
}

// sortBy sorts the list by a column (again: the other way round).
func (l *sandboxList) sortBy(column string) {
	l.u.m.sortBy(column)
	l.markSort()
	l.refresh()
}

// markSort puts the arrow on the sort column's header.
func (l *sandboxList) markSort() {
	m := l.u.m
	for i, h := range l.headers {
		if text := SortMark(listColumns[i].title, m.sortColumn(), m.sortDesc); h.Text != text {
			h.SetText(text)
		}
	}
}

func statusImportance(s sandbox.Status) widget.Importance {
	switch s {
	case sandbox.StatusRunning:
		return widget.SuccessImportance
	case sandbox.StatusPaused:
		return widget.WarningImportance
	case sandbox.StatusMissing:
		return widget.DangerImportance
	}
	return widget.MediumImportance
}

func (l *sandboxList) selected(id widget.ListItemID) {
	if l.syncing || id >= len(l.u.m.visible) {
		return
	}
	l.u.selectSandbox(l.u.m.visible[id].ID)
}

// refresh redraws the list from the model and keeps the selected sandbox
// selected wherever it moved; a sandbox that vanished is deselected. When
// nothing it shows changed, it redraws nothing.
func (l *sandboxList) refresh() {
	m := l.u.m
	if count := fmt.Sprintf("%d of %d", len(m.visible), len(m.snap.Sandboxes)); count != l.count.Text {
		l.count.SetText(count)
		if l.bar != nil {
			l.bar.Refresh() // the count's width may have changed
		}
	}
	if len(m.snap.Sandboxes) == 0 {
		l.showEmpty("No sandboxes yet. When an assistant runs code, its sandbox appears here.")
	} else if len(m.visible) == 0 {
		l.showEmpty("No sandbox matches the filter.")
	} else if l.empty.Visible() {
		l.empty.Hide()
	}
	l.showConnect(len(m.snap.Sandboxes) == 0 && l.noClient && m.snap.Sessions == 0)
	l.syncing = true
	defer func() { l.syncing = false }()
	if m.selected != "" && m.indexOf(m.selected) < 0 { // gone, or filtered out: it leaves the detail pane
		l.u.selectSandbox("")
	}
	row := m.indexOf(m.selected)
	drawn := make([]string, 0, len(m.visible)*len(listColumns)+1)
	now := l.u.now()
	for _, info := range m.visible {
		drawn = append(drawn, rowTexts(info, now)...)
	}
	drawn = append(drawn, fmt.Sprint(row))
	if l.drawn != nil && slices.Equal(drawn, l.drawn) {
		return
	}
	l.drawn = drawn
	l.redraws++
	if row >= 0 {
		l.list.Select(row)
	} else {
		l.list.UnselectAll()
	}
	l.list.Refresh()
}

// showEmpty shows text in place of the list.
func (l *sandboxList) showEmpty(text string) {
	if l.empty.Text != text {
		l.empty.SetText(text)
	}
	if !l.empty.Visible() {
		l.empty.Show()
	}
}

// clientsChanged records whether any assistant has Sandtray in its config.
func (l *sandboxList) clientsChanged(connected bool) {
	l.noClient = !connected
	l.refresh()
}

func (l *sandboxList) showConnect(show bool) {
	if show == l.connect.Visible() {
		return
	}
	if show {
		l.connect.Show()
	} else {
		l.connect.Hide()
	}
}

// columnsLayout places its objects side by side at its columns' widths,
// giving spare width to the growing columns.
type columnsLayout struct{ cols []column }

func (l *columnsLayout) MinSize(objects []fyne.CanvasObject) fyne.Size {
	objects = objects[:min(len(objects), len(l.cols))]
	var w, h float32
	for i, o := range objects {
		w += l.cols[i].width
		h = max(h, o.MinSize().Height)
	}
	return fyne.NewSize(w+theme.Padding()*float32(len(objects)-1), h)
}

func (l *columnsLayout) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	objects = objects[:min(len(objects), len(l.cols))] // a column too many is not drawn, rather than the app ended
	pad := theme.Padding()
	fixed, growing := pad*float32(len(objects)-1), float32(0)
	for i := range objects {
		fixed += l.cols[i].width
		if l.cols[i].grow {
			growing += l.cols[i].width
		}
	}
	spare := max(0, size.Width-fixed)
	x := float32(0)
	for i, o := range objects {
		w := l.cols[i].width
		if l.cols[i].grow && growing > 0 {
			w += spare * l.cols[i].width / growing
		}
		o.Move(fyne.NewPos(x, 0))
		o.Resize(fyne.NewSize(w, size.Height))
		x += w + pad
	}
}
