package ui

import (
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/serve/control"
)

// detailPane shows the selected sandbox: a header with its actions, a line
// for the outcome of the last action, and the Activity, Resources, Files,
// Jobs, Network and Details tabs.
type detailPane struct {
	u         *UI
	title     *widget.Label
	subtitle  *widget.Label
	message   *statusMessage
	actions   *actionBar
	tabs      *container.AppTabs
	activity  *activityTab
	resources *resourcesTab
	files     *filesTab
	jobs      *jobsView
	network   *networkTab
	info      *infoTab
	snaps     *snapshotsTab // nil when the Backend has no snapshots (snapshots.go)
	names     *fyne.Container
	body      *fyne.Container
	none      *widget.Label
	shownID   string // the sandbox the tabs were last filled for
}

func newDetailPane(u *UI) *detailPane {
	d := &detailPane{
		u:        u,
		title:    widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		subtitle: widget.NewLabel(""),
		message:  newStatusMessage(u),
		none:     widget.NewLabel("Select a sandbox to see what ran in it, its resources and its files."),
	}
	d.subtitle.Truncation = fyne.TextTruncateEllipsis
	d.none.Alignment = fyne.TextAlignCenter
	d.actions = newActionBar(u)
	d.activity = newActivityTab(u)
	d.resources = newResourcesTab(u)
	d.files = newFilesTab(u)
	d.jobs = newJobsView(u, false)
	d.info = newInfoTab(u)
	d.network = newNetworkTab(u)
	d.tabs = container.NewAppTabs(
		container.NewTabItem("Activity", d.activity.object()),
		container.NewTabItem("Resources", d.resources.object()),
		container.NewTabItem("Files", d.files.object()),
		container.NewTabItem("Jobs", d.jobs.object()),
		container.NewTabItem("Network", d.network.object()),
		container.NewTabItem("Details", d.info.object()),
	)
	if sb, ok := u.b.(SnapshotBackend); ok {
		d.snaps = newSnapshotsTab(u, sb)
		d.tabs.Append(container.NewTabItem("Snapshots", d.snaps.object()))
	}
	d.activity.onNew = d.newActivity
	d.tabs.OnSelected = func(*container.TabItem) {
		d.jobs.setShown(d.jobsShown())
		d.refresh()
	}
	d.names = container.NewBorder(nil, nil, d.title, nil, d.subtitle)
	header := container.NewVBox(container.NewBorder(nil, nil, nil, d.actions.object(), d.names), d.message.label,
		d.actions.why) // shown when the runtime cannot serve an action
	d.body = container.NewBorder(header, nil, nil, nil, d.tabs)
	d.body.Hide()
	return d
}

func (d *detailPane) object() fyne.CanvasObject {
	return container.NewStack(container.NewCenter(d.none), d.body)
}

// selectionChanged empties what belonged to the previous sandbox.
func (d *detailPane) selectionChanged() {
	d.clearMessage()
	d.activity.reset()
	d.files.reset()
	d.network.reset()
	d.jobs.setSandbox(d.u.m.selected)
	d.refresh()
}

// refresh shows the selected sandbox as the latest snapshot has it.
func (d *detailPane) refresh() {
	info, ok := d.u.m.current()
	if !ok {
		d.body.Hide()
		d.none.Show()
		d.shownID = ""
		return
	}
	d.none.Hide()
	d.body.Show()
	d.shownID = info.ID
	if d.title.Text != info.Name {
		d.title.SetText(info.Name)
		d.names.Refresh() // the name's width changed: lay the header out again
	}
	if sub := StatusText(info.Status) + " · " + info.Image; d.subtitle.Text != sub {
		d.subtitle.SetText(sub)
	}
	d.actions.refresh(info)
	d.activity.refresh(info)
	switch d.tabs.Selected().Text {
	case "Resources":
		d.resources.refresh(info)
	case "Details":
		d.info.refresh(info)
	case "Files":
		d.files.refresh(info)
	case "Jobs":
		d.jobs.refresh()
	case "Network":
		d.network.refresh(info)
	case "Snapshots":
		d.snaps.refresh(info)
	}
}

// newActivity follows what new calls in the sandbox shown did: the Files
// tab lists its folders again (a call may have written files), and the
// Snapshots tab its snapshots (a call may have taken one).
func (d *detailPane) newActivity(id string, entries []control.LogEntry) {
	if id != d.shownID {
		return
	}
	d.files.follow()
	if d.snaps != nil && slices.ContainsFunc(entries, func(e control.LogEntry) bool { return snapshotTool(e.Tool) }) {
		d.snaps.load()
	}
}

// snapshotTool reports whether an activity entry's tool takes, restores,
// forks or deletes snapshots.
func snapshotTool(tool string) bool {
	return strings.Contains(tool, "snapshot") || strings.Contains(tool, "restore") || strings.Contains(tool, "fork")
}

// showError tells the person an action failed, in place above the tabs.
func (d *detailPane) showError(what string, err error) {
	d.message.show(what+": "+err.Error(), kindError)
}

// showInfo tells the person an action succeeded.
func (d *detailPane) showInfo(text string) { d.message.show(text, kindSuccess) }

// showProgress tells the person an action is under way.
func (d *detailPane) showProgress(text string) { d.message.show(text, kindInfo) }

// showWarning tells the person an action could not be done as asked, and
// what was done instead.
func (d *detailPane) showWarning(text string) { d.message.show(text, kindWarning) }

func (d *detailPane) clearMessage() { d.message.clear() }

// jobsShown says whether the Jobs tab is on screen.
func (d *detailPane) jobsShown() bool {
	return d.body.Visible() && d.tabs.Selected() != nil && d.tabs.Selected().Text == "Jobs"
}

// selectedInfo returns the selected sandbox, for actions.
func (d *detailPane) selectedInfo() (sandbox.Info, bool) {
	return d.u.m.current()
}

// infoFields are the rows of the Details tab, in order: the forwards first,
// where a person looks for a server's URL.
var infoFields = []string{"Ports", "Image", "ID", "Terminal", "Created", "Last used", "Owner", "Lifetime",
	"Network", "GPUs", "Security", "Limits", "Workdir", "Labels"}

// viewRows are the rows of infoFields that portsView fills, not InfoRows.
var viewRows = []string{"Ports", "GPUs"}

// infoTab shows what a sandbox is: image, id, times, network, security
// profile, labels, and the command that opens a shell in it.
type infoTab struct {
	u       *UI
	values  map[string]*widget.Label
	keys    map[string]*widget.Label
	copyCmd *widget.Button
	form    *fyne.Container
	ports   *portsView // the Ports and GPUs rows (ports.go)
}

func newInfoTab(u *UI) *infoTab {
	t := &infoTab{u: u, values: map[string]*widget.Label{}, keys: map[string]*widget.Label{}, ports: newPortsView(u)}
	t.copyCmd = widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), t.copyExec)
	t.form = container.New(layout.NewFormLayout())
	for _, name := range infoFields {
		key := widget.NewLabelWithStyle(name, fyne.TextAlignTrailing, fyne.TextStyle{Bold: true})
		t.keys[name] = key
		value := widget.NewLabel("")
		value.Wrapping = fyne.TextWrapWord
		value.Selectable = true
		t.values[name] = value
		var cell fyne.CanvasObject = value
		if name == "Terminal" {
			value.TextStyle.Monospace = true
			cell = container.NewBorder(nil, nil, nil, container.NewCenter(t.copyCmd), value)
		}
		if name == "Ports" {
			cell = t.ports.object()
		}
		if name == "Labels" || name == "ID" {
			value.TextStyle.Monospace = true
		}
		t.form.Add(key)
		t.form.Add(cell)
	}
	return t
}

func (t *infoTab) object() fyne.CanvasObject {
	return container.NewVScroll(t.form)
}

// refresh fills the rows from the sandbox.
func (t *infoTab) refresh(info sandbox.Info) {
	for name, text := range InfoRows(info, t.u.now(), t.u.m.snap.Docker.Host) {
		if v := t.values[name]; v != nil && v.Text != text {
			v.SetText(text)
		}
	}
	t.ports.refresh(info)
	gpus, matter := t.ports.gpuText(info)
	if t.values["GPUs"].Text != gpus {
		t.values["GPUs"].SetText(gpus)
	}
	if matter != t.keys["GPUs"].Visible() { // the row only where GPUs matter
		for _, w := range []*widget.Label{t.keys["GPUs"], t.values["GPUs"]} {
			if matter {
				w.Show()
			} else {
				w.Hide()
			}
		}
		t.form.Refresh()
	}
}

func (t *infoTab) copyExec() {
	if info, ok := t.u.m.current(); ok {
		cmd := ExecCommand(info, t.u.m.snap.Docker.Host)
		t.u.app.Clipboard().SetContent(cmd)
		t.u.detail.showInfo("Copied “" + cmd + "” to the clipboard.")
	}
}
