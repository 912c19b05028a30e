package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Jobs is what the Jobs view needs of the engine: the background jobs it
// remembers, and job_status and job_stop as a model has them (the engine
// is one). The view follows a job's output with job_status's offsets.
type Jobs interface {
	Jobs(sandboxID string) []sandbox.JobInfo
	JobStatus(ctx context.Context, jobID string, since int64) (sandbox.JobStatus, error)
	JobStop(ctx context.Context, jobID string) (sandbox.JobStatus, error)
}

// jobPoll is how often the output of a running job is read again.
const jobPoll = 500 * time.Millisecond

// jobOutputKept is how much of a job's output the view keeps (its end),
// of which outputView shows the last shownBytes; the full log has it all.
const jobOutputKept = 256 << 10

// jobLogMax bounds the full log of a job written to a file.
const jobLogMax = 256 << 20

// jobColumns are the Jobs list's columns; Sandbox only in the view of all.
var jobColumns = []column{
	{"Status", 90, false}, {"Command", 260, true}, {"Sandbox", 140, false},
	{"Started", 80, false}, {"Duration", 80, false}, {"Exit", 50, false},
}

// jobsView lists background jobs, of the selected sandbox (the Jobs tab) or
// of every sandbox (the Jobs window), and shows the chosen job: its
// command, state and output, which follows live while the job runs, and
// Stop.
type jobsView struct {
	u       *UI
	all     bool
	cols    []column
	jobs    []sandbox.JobInfo
	list    *widget.List
	empty   *widget.Label
	title   *widget.Label
	state   *widget.Label
	output  *outputView
	stop    *widget.Button
	copyOut *widget.Button
	message *statusMessage
	root    fyne.CanvasObject

	sandboxID string // the tab's sandbox
	shown     bool   // on screen: polls stop while not
	chosen    string // job id, "" for none
	text      string // its output so far (the end of it)
	offset    int64  // where job_status goes on
	gen       int    // bumped when the choice changes: older polls' answers are dropped
	polling   bool   // a poll is in flight or scheduled
	inflight  bool   // a list fetch is
	again     bool   // a list fetch was asked for while one was in flight
}

func newJobsView(u *UI, all bool) *jobsView {
	v := &jobsView{u: u, all: all, cols: jobColumns}
	if !all {
		v.cols = append(append([]column{}, jobColumns[:2]...), jobColumns[3:]...)
	}
	v.list = widget.NewList(func() int { return len(v.jobs) }, v.createRow, v.updateRow)
	v.list.OnSelected = func(id widget.ListItemID) {
		if id < len(v.jobs) {
			v.choose(v.jobs[id].ID)
		}
	}
	v.empty = widget.NewLabel(noJobsText(all))
	v.empty.Wrapping = fyne.TextWrapWord
	v.empty.Alignment = fyne.TextAlignCenter
	v.title = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	v.title.Truncation = fyne.TextTruncateEllipsis
	v.state = widget.NewLabel("Choose a job to see its output.")
	v.output = newOutputView(u)
	v.stop = widget.NewButtonWithIcon("Stop", theme.MediaStopIcon(), v.stopChosen)
	v.stop.Importance = widget.DangerImportance
	v.stop.Disable()
	v.copyOut = widget.NewButtonWithIcon("Copy output", theme.ContentCopyIcon(), func() {
		u.app.Clipboard().SetContent(v.text)
		v.message.show("Copied the output to the clipboard.", kindInfo)
	})
	v.copyOut.Disable()
	v.message = newStatusMessage(u)
	header := container.New(&columnsLayout{cols: v.cols})
	for _, c := range v.cols {
		header.Add(widget.NewLabelWithStyle(c.title, fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))
	}
	top := container.NewBorder(header, nil, nil, nil, container.NewStack(v.list, v.empty))
	head := container.NewVBox(container.NewBorder(nil, nil, nil, container.NewHBox(v.copyOut, v.stop), v.title),
		v.state, v.message.label)
	split := container.NewVSplit(top, container.NewBorder(head, nil, nil, nil, v.output.object()))
	split.Offset = 0.4
	v.root = split
	return v
}

func noJobsText(all bool) string {
	if all {
		return "No background jobs. When an assistant starts one (background: true, or a command that runs past wait_s), it appears here with its output."
	}
	return "No background jobs in this sandbox. When an assistant starts one, it appears here with its output."
}

func (v *jobsView) object() fyne.CanvasObject { return v.root }

func (v *jobsView) createRow() fyne.CanvasObject {
	row := container.New(&columnsLayout{cols: v.cols})
	for range v.cols {
		cell := widget.NewLabel("")
		cell.Truncation = fyne.TextTruncateEllipsis
		row.Add(cell)
	}
	return row
}

func (v *jobsView) updateRow(id widget.ListItemID, o fyne.CanvasObject) {
	if id >= len(v.jobs) {
		return
	}
	j := v.jobs[id]
	texts := JobRowTexts(j, v.u.now())
	if !v.all {
		texts = append(texts[:2], texts[3:]...)
	}
	for i, cell := range o.(*fyne.Container).Objects {
		l := cell.(*widget.Label)
		l.Importance = widget.MediumImportance
		if i == 0 {
			l.Importance = jobImportance(j)
		}
		if i == 1 {
			l.TextStyle.Monospace = true
		}
		l.SetText(texts[i])
	}
}

// JobRowTexts is what the Jobs list shows of a job, one string per column
// (Status, Command, Sandbox, Started, Duration, Exit).
func JobRowTexts(j sandbox.JobInfo, now time.Time) []string {
	exit := placeholder
	if j.ExitCode != nil {
		exit = fmt.Sprint(*j.ExitCode)
	}
	started := placeholder
	if !j.Started.IsZero() {
		started = j.Started.Local().Format("15:04:05")
		if now.Sub(j.Started) > 24*time.Hour {
			started = j.Started.Local().Format("Jan 2 15:04")
		}
	}
	return []string{JobStatusText(j.Status), FirstLine(j.Command, 200), j.SandboxName, started,
		FormatDuration(j.Duration.Milliseconds()), exit}
}

// JobStatusText is the word the Jobs view shows for a job's status.
func JobStatusText(s string) string {
	switch s {
	case sandbox.JobRunning:
		return "Running"
	case sandbox.JobExited:
		return "Exited"
	case sandbox.JobStopped:
		return "Stopped"
	case sandbox.JobTimedOut:
		return "Timed out"
	case sandbox.JobFailed:
		return "Failed"
	}
	return StatusText(sandbox.Status(s))
}

func jobImportance(j sandbox.JobInfo) widget.Importance {
	switch {
	case j.Status == sandbox.JobRunning:
		return widget.SuccessImportance
	case j.Status == sandbox.JobFailed || j.Status == sandbox.JobTimedOut || (j.ExitCode != nil && *j.ExitCode != 0):
		return widget.DangerImportance
	}
	return widget.MediumImportance
}

// setShown says whether the view is on screen; a running job's output is
// followed only while it is.
func (v *jobsView) setShown(on bool) {
	v.shown = on
	if on {
		v.refresh()
		v.follow()
	}
}

// setSandbox makes the tab show another sandbox's jobs.
func (v *jobsView) setSandbox(id string) {
	if v.sandboxID == id {
		return
	}
	v.sandboxID = id
	v.jobs = nil
	v.list.UnselectAll()
	v.choose("")
	v.list.Refresh()
}

// refresh fetches the job list again (never two fetches at once).
func (v *jobsView) refresh() {
	if !v.shown {
		return
	}
	if v.inflight {
		v.again = true
		return
	}
	v.inflight = true
	id := v.sandboxID
	if v.all {
		id = ""
	}
	var jobs []sandbox.JobInfo
	v.u.background(func(context.Context) error {
		jobs = v.u.jobs().Jobs(id)
		return nil
	}, func(error) {
		v.inflight = false
		if v.all || id == v.sandboxID {
			v.show(jobs)
		}
		if v.again {
			v.again = false
			v.refresh()
		}
	})
}

// show lists jobs, keeping the chosen one chosen; the newest job is chosen
// when none was.
func (v *jobsView) show(jobs []sandbox.JobInfo) {
	v.jobs = jobs
	if len(jobs) == 0 {
		v.empty.Show()
	} else {
		v.empty.Hide()
	}
	v.list.Refresh()
	row := -1
	for i, j := range jobs {
		if j.ID == v.chosen {
			row = i
			v.showState(j.JobStatus)
		}
	}
	switch {
	case row >= 0:
		v.list.Select(row)
	case len(jobs) > 0:
		v.list.Select(0) // chooses it
	default:
		v.choose("")
	}
}

// choose shows job id's output from its start and follows it.
func (v *jobsView) choose(id string) {
	if id == v.chosen {
		return
	}
	v.chosen, v.text, v.offset = id, "", 0
	v.gen++
	v.polling = false
	v.output.clear()
	v.message.clear()
	if id == "" {
		v.title.SetText("")
		v.state.SetText("Choose a job to see its output.")
		v.stop.Disable()
		v.copyOut.Disable()
		return
	}
	for _, j := range v.jobs {
		if j.ID == id {
			v.title.SetText(FirstLine(j.Command, 300))
			v.showState(j.JobStatus)
		}
	}
	v.follow()
}

// follow reads the chosen job's output from where the view has it, then
// again every jobPoll while the job runs and the view is shown.
func (v *jobsView) follow() {
	if v.chosen == "" || v.polling || !v.shown {
		return
	}
	v.polling = true
	id, gen, since := v.chosen, v.gen, v.offset
	var st sandbox.JobStatus
	v.u.background(func(ctx context.Context) (err error) {
		st, err = v.u.jobs().JobStatus(ctx, id, since)
		return err
	}, func(err error) {
		if gen != v.gen {
			return
		}
		v.polling = false
		if err != nil {
			v.message.show("Could not read the job's output: "+err.Error(), kindError)
			return
		}
		v.append(st.Output)
		v.offset = st.NextOffset
		v.showState(st)
		switch {
		case st.Output != "": // more may be waiting past the cap: read on at once
			v.u.after(0, v.resume(gen))
		case st.Status == sandbox.JobRunning:
			v.u.after(jobPoll, v.resume(gen))
		}
	})
}

// resume is a scheduled poll: it goes on only if the choice is unchanged.
func (v *jobsView) resume(gen int) func() {
	return func() {
		if gen == v.gen {
			v.follow()
		}
	}
}

// append adds output, keeping the end of it, and scrolls to it.
func (v *jobsView) append(s string) {
	if s == "" {
		return
	}
	v.text += s
	if len(v.text) > jobOutputKept {
		v.text = v.text[len(v.text)-jobOutputKept:]
	}
	id := v.chosen
	missing := max(0, int(v.offset)+len(s)-len(v.text)) // v.offset is where this part began
	v.output.showTail(v.text, missing, id, func(ctx context.Context) (string, error) { return v.wholeOutput(ctx, id) })
	v.copyOut.Enable()
	v.output.toBottom()
}

// wholeOutput reads a job's output from its start, as job_status's offsets
// go, up to jobLogMax.
func (v *jobsView) wholeOutput(ctx context.Context, id string) (string, error) {
	var b strings.Builder
	var since int64
	for b.Len() < jobLogMax {
		st, err := v.u.jobs().JobStatus(ctx, id, since)
		if err != nil {
			return b.String(), err
		}
		b.WriteString(st.Output)
		if st.Output == "" || st.NextOffset <= since {
			break
		}
		since = st.NextOffset
	}
	return b.String(), nil
}

// showState fills the state line and the Stop button for the chosen job.
func (v *jobsView) showState(st sandbox.JobStatus) {
	setText(v.state, JobStateText(st))
	v.state.Importance = jobImportance(sandbox.JobInfo{JobStatus: st})
	v.state.Refresh()
	setEnabled(v.stop, st.Status == sandbox.JobRunning)
}

// JobStateText is the chosen job's one-line state: how it is or ended.
func JobStateText(st sandbox.JobStatus) string {
	parts := []string{JobStatusText(st.Status)}
	if !st.Started.IsZero() {
		parts = append(parts, "started "+st.Started.Local().Format("15:04:05"))
	}
	parts = append(parts, FormatDuration(st.Duration.Milliseconds()))
	if st.ExitCode != nil {
		parts = append(parts, fmt.Sprintf("exit %d", *st.ExitCode))
	}
	if st.Error != "" {
		parts = append(parts, st.Error)
	}
	parts = append(parts, st.ID)
	return strings.Join(parts, " · ")
}

// stopChosen ends the chosen job (job_stop) and says how it went.
func (v *jobsView) stopChosen() {
	id := v.chosen
	if id == "" {
		return
	}
	v.stop.Disable()
	v.message.show("Stopping "+id+"…", kindInfo)
	var st sandbox.JobStatus
	v.u.background(func(ctx context.Context) (err error) {
		st, err = v.u.jobs().JobStop(ctx, id)
		return err
	}, func(err error) {
		if err != nil {
			v.message.show("Could not stop "+id+": "+err.Error(), kindError)
			setEnabled(v.stop, true)
			return
		}
		v.message.show("Stopped "+id+".", kindSuccess)
		if id == v.chosen {
			v.showState(st)
			v.follow() // its last output
		}
		v.refresh()
	})
}
