package ui

import (
	"context"
	"errors"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Egress is what the egress approval dialog and the Network tab need of
// the engine (the engine is one): answer a pending request, read a
// sandbox's view of the gate, and take a rule back. A Backend without it
// shows neither; the requests then wait for `sandtray egress`.
type Egress interface {
	AnswerEgress(ctx context.Context, id string, a sandbox.EgressAnswer) error
	// AnswerEgressHost answers a sandbox's requests for a host, or adds an
	// "always" rule for it when none waits (the Network tab's Allow and
	// Deny).
	AnswerEgressHost(ctx context.Context, ref, target string, a sandbox.EgressAnswer) (int, error)
	EgressNetwork(ctx context.Context, ref string) (sandbox.EgressNetwork, error)
	RemoveEgressRule(ctx context.Context, ref, pattern string) error
	RemoveEgressApproval(ctx context.Context, pattern string) error
}

// egressAnswers are the approval dialog's buttons, in the order shown.
var egressAnswers = []struct {
	text   string
	answer sandbox.EgressAnswer
	imp    widget.Importance
}{
	{"Allow once", sandbox.EgressAllowOnce, widget.HighImportance},
	{"Allow always for this sandbox", sandbox.EgressAllowSandbox, widget.MediumImportance},
	{"Allow for all sandboxes", sandbox.EgressAllowGlobal, widget.MediumImportance},
	{"Deny", sandbox.EgressDeny, widget.DangerImportance},
	{"Deny always for this sandbox", sandbox.EgressDenySandbox, widget.MediumImportance},
}

// egressAsk shows the requests of the egress gate that wait for the user,
// one dialog at a time, oldest first: each new one is notified (and the
// window shown) when it arrives; one answered elsewhere (`sandtray egress
// allow`), timed out or abandoned closes its dialog, and the next shows.
// It runs on Fyne's goroutine.
type egressAsk struct {
	u        *UI
	seen     map[string]bool // ids notified of
	answered map[string]bool // ids answered here, until the engine drops them
	shown    sandbox.EgressPending
	front    string // the id chosen to show first (choose), while it waits
	dlg      *dialog.CustomDialog
	wait     *widget.Label
	more     *widget.Label
	problem  *widget.Label
	buttons  []*widget.Button
	ticking  bool
	armGen   int // bumped by each new dialog: an older one's arming is void
}

// egressArmDelay is how long a dialog's buttons stay disabled after it
// shows a request (F50): a click meant for the window beneath as the
// dialog comes up, or the second click of a double-click on the previous
// request's dialog, lands on nothing instead of answering this request.
const egressArmDelay = 700 * time.Millisecond

func newEgressAsk(u *UI) *egressAsk {
	return &egressAsk{u: u, seen: map[string]bool{}, answered: map[string]bool{}}
}

// waiting is what still needs an answer: the snapshot's pending requests
// less those answered here, oldest first but the one chosen first.
func (a *egressAsk) waiting() []sandbox.EgressPending {
	var out []sandbox.EgressPending
	for _, p := range a.u.m.snap.Egress {
		switch {
		case a.answered[p.ID]:
		case p.ID == a.front:
			out = append([]sandbox.EgressPending{p}, out...)
		default:
			out = append(out, p)
		}
	}
	return out
}

// refresh follows the latest snapshot's pending requests.
func (a *egressAsk) refresh() {
	if _, ok := a.u.b.(Egress); !ok {
		return
	}
	live := map[string]bool{}
	var fresh []sandbox.EgressPending
	for _, p := range a.u.m.snap.Egress {
		live[p.ID] = true
		if !a.seen[p.ID] {
			a.seen[p.ID] = true
			fresh = append(fresh, p)
		}
	}
	for id := range a.seen {
		if !live[id] {
			delete(a.seen, id)
		}
	}
	for id := range a.answered {
		if !live[id] {
			delete(a.answered, id)
		}
	}
	if len(fresh) > 0 && !a.u.shown {
		// The window is hidden: the desktop tells, and the window comes up
		// with the dialog, since the request times out.
		title := "A sandbox asks for the network"
		if len(fresh) > 1 {
			title = "Sandboxes ask for the network"
		}
		a.u.notify(title, EgressNoticeBody(fresh[0]))
		a.u.ShowWindow()
	}
	a.show()
}

// show puts the oldest waiting request in the dialog, or closes it.
func (a *egressAsk) show() {
	queue := a.waiting()
	if len(queue) == 0 {
		a.close()
		return
	}
	if a.dlg == nil || a.shown.ID != queue[0].ID {
		a.open(queue[0])
	}
	a.more.SetText(EgressQueueText(len(queue) - 1))
	if len(queue) > 1 {
		a.more.Show()
	} else {
		a.more.Hide()
	}
	a.tick()
}

// choose shows request id first (the Network tab's Answer… button).
func (a *egressAsk) choose(id string) {
	a.front = id
	a.show()
}

// open replaces the dialog with one for p.
func (a *egressAsk) open(p sandbox.EgressPending) {
	a.close()
	a.shown = p
	heading := widget.NewLabelWithStyle(EgressHeading(p), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	heading.Wrapping = fyne.TextWrapWord
	client := OneLine(p.Client, clientShown)
	if client == "" {
		client = placeholder
	}
	target := widget.NewLabelWithStyle(EgressTarget(p.Host, p.Port), fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	target.Selectable = true
	a.wait = widget.NewLabel(EgressWaitText(p, a.u.now()))
	form := widget.NewForm(
		widget.NewFormItem("Sandbox", widget.NewLabel(p.Sandbox+" ("+ShortID(p.SandboxID)+")")),
		widget.NewFormItem("Assistant", widget.NewLabel(client)),
		widget.NewFormItem("Host", target),
		widget.NewFormItem("Kind", widget.NewLabel(EgressMethodText(p.Method))),
	)
	if p.Reason != "" {
		reason := widget.NewLabel("“" + OneLine(p.Reason, reasonShown) + "”")
		reason.Wrapping = fyne.TextWrapWord
		form.Append("Reason", reason)
	}
	form.Append("Waiting", a.wait)
	hint := widget.NewLabel(EgressHint(p))
	hint.Wrapping = fyne.TextWrapWord
	hint.Importance = widget.LowImportance
	a.more = widget.NewLabel("")
	a.more.Importance = widget.WarningImportance
	a.more.Hide()
	a.problem = widget.NewLabel("")
	a.problem.Wrapping = fyne.TextWrapWord
	a.problem.Importance = widget.DangerImportance
	a.problem.Hide()
	a.buttons = nil
	for _, b := range egressAnswers {
		btn := widget.NewButton(b.text, func() { a.answer(p, b.answer) })
		btn.Importance = b.imp
		btn.Disable() // armed after egressArmDelay (F50)
		a.buttons = append(a.buttons, btn)
	}
	a.armGen++
	gen, buttons := a.armGen, a.buttons
	a.u.after(egressArmDelay, func() {
		if a.armGen == gen {
			for _, b := range buttons {
				b.Enable()
			}
		}
	})
	allow := container.NewGridWithColumns(3, a.buttons[0], a.buttons[1], a.buttons[2])
	deny := container.NewGridWithColumns(3, a.buttons[3], a.buttons[4])
	content := container.NewVBox(heading, form, hint, a.more, a.problem)
	a.dlg = dialog.NewCustomWithoutButtons("Network request", content, a.u.win)
	a.dlg.SetIcon(theme.WarningIcon())
	a.dlg.SetButtons([]fyne.CanvasObject{container.NewVBox(allow, deny)})
	a.dlg.Resize(fyne.NewSize(720, a.dlg.MinSize().Height))
	a.dlg.Show()
}

// close hides the dialog, if one shows.
func (a *egressAsk) close() {
	if a.dlg != nil {
		a.dlg.Hide()
		a.dlg = nil
	}
	a.shown = sandbox.EgressPending{}
}

// tick keeps the dialog's countdown current while it shows.
func (a *egressAsk) tick() {
	if a.dlg == nil {
		return
	}
	if text := EgressWaitText(a.shown, a.u.now()); a.wait.Text != text {
		a.wait.SetText(text)
	}
	if a.ticking {
		return
	}
	a.ticking = true
	a.u.after(time.Second, func() {
		a.ticking = false
		a.tick()
	})
}

// answer passes the user's answer on; the dialog shows the next request
// when the engine took it, or says why not.
func (a *egressAsk) answer(p sandbox.EgressPending, ans sandbox.EgressAnswer) {
	eg, ok := a.u.b.(Egress)
	if !ok {
		return
	}
	for _, b := range a.buttons {
		b.Disable()
	}
	buttons := a.buttons
	a.u.background(func(ctx context.Context) error {
		return eg.AnswerEgress(ctx, p.ID, ans)
	}, func(err error) {
		switch {
		case err == nil:
			a.answered[p.ID] = true
			a.u.status.showMessage(EgressAnsweredText(p, ans), kindSuccess)
		case errors.Is(err, sandbox.ErrNotFound):
			// Answered elsewhere, timed out or abandoned meanwhile.
			a.answered[p.ID] = true
			a.u.status.showMessage("The request of sandbox "+p.Sandbox+" for "+EgressTarget(p.Host, p.Port)+" no longer waits: it was answered elsewhere, timed out or its program gave up.", kindWarning)
		default:
			if a.shown.ID == p.ID {
				a.problem.SetText("Could not answer: " + err.Error())
				a.problem.Show()
				for _, b := range buttons {
					b.Enable()
				}
			}
			return
		}
		a.show()
		a.u.detail.refresh()
	})
}
