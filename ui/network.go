package ui

import (
	"context"
	"reflect"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// networkColumns are the columns of the Network tab's connections.
var networkColumns = []column{
	{"Time", 72, false}, {"Host", 170, true}, {"Method", 90, false}, {"Decision", 76, false},
	{"Up / down", 150, false}, {"Took", 72, false}, {"Rule", 150, true},
}

// networkTab shows a sandbox's egress: its mode, what waits for an answer,
// its rules (with Remove), the approvals for every sandbox (with Remove)
// and the config's, and its latest connections, newest first. It follows
// the snapshots as the other tabs do: each decision of the gate publishes
// one.
type networkTab struct {
	u       *UI
	mode    *widget.Label
	pending *fyne.Container
	rules   *fyne.Container
	ruleBox *fyne.Container // the rule sections: shown for network "egress" only
	global  *fyne.Container
	config  *widget.Label
	host    *widget.Entry // a host to add a rule for, without a request
	list    *widget.List
	empty   *widget.Label
	chosen  *widget.Label // the chosen connection in full
	root    fyne.CanvasObject

	info         sandbox.Info
	net          sandbox.EgressNetwork
	recent       []sandbox.EgressRecord // newest first
	loadedID     string
	choice       *sandbox.EgressRecord // the connection chosen in the list
	shownRules   []string              // what the rule rows show
	shownGlobal  []string
	shownPending []sandbox.EgressPending
	inflight     bool
	again        bool
}

func newNetworkTab(u *UI) *networkTab {
	t := &networkTab{u: u}
	t.mode = widget.NewLabel("")
	t.mode.Wrapping = fyne.TextWrapWord
	t.pending = container.NewVBox()
	t.rules = container.NewVBox()
	t.global = container.NewVBox()
	t.config = widget.NewLabel("")
	t.config.Wrapping = fyne.TextWrapWord
	t.config.Importance = widget.LowImportance
	t.list = widget.NewList(func() int { return len(t.recent) }, t.createRow, t.updateRow)
	t.list.OnSelected = func(id widget.ListItemID) {
		if id < len(t.recent) {
			r := t.recent[id]
			t.choice = &r
			t.chosen.SetText(EgressRecordText(r))
		}
	}
	t.chosen = widget.NewLabel(noChoice)
	t.chosen.Wrapping = fyne.TextWrapWord
	t.chosen.Selectable = true
	t.empty = widget.NewLabel("No connections yet. Each one the sandbox makes through the gate appears here, allowed or denied.")
	t.empty.Wrapping = fyne.TextWrapWord
	t.empty.Alignment = fyne.TextAlignCenter
	header := container.New(&columnsLayout{cols: networkColumns})
	for _, c := range networkColumns {
		header.Add(widget.NewLabelWithStyle(c.title, fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))
	}
	bold := func(s string) *widget.Label {
		return widget.NewLabelWithStyle(s, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	}
	t.host = widget.NewEntry()
	t.host.SetPlaceHolder("host or host:port, such as pypi.org")
	t.host.OnSubmitted = func(string) { t.addRule(true) }
	allow := widget.NewButtonWithIcon("Allow", theme.ConfirmIcon(), func() { t.addRule(true) })
	deny := widget.NewButtonWithIcon("Deny", theme.CancelIcon(), func() { t.addRule(false) })
	add := container.NewBorder(nil, nil, nil, container.NewHBox(allow, deny), t.host)
	t.ruleBox = container.NewVBox(bold("This sandbox's rules"), t.rules, add,
		bold("Allowed for every sandbox"), t.global, t.config)
	top := container.NewVBox(t.mode, t.pending, t.ruleBox)
	recent := container.NewBorder(container.NewVBox(bold("Latest connections"), header), t.chosen, nil, nil,
		container.NewStack(t.list, t.empty))
	// Side by side: the rules on the left, the connections, which grow
	// live, on the right, each with the pane's whole height.
	split := container.NewHSplit(container.NewVScroll(top), recent)
	split.Offset = 0.31
	t.root = split
	return t
}

// noChoice is the line under the connections while none is chosen.
const noChoice = "Choose a connection to read its rule and any refusal in full."

func (t *networkTab) object() fyne.CanvasObject { return t.root }

func (t *networkTab) createRow() fyne.CanvasObject {
	row := container.New(&columnsLayout{cols: networkColumns})
	for range networkColumns {
		cell := widget.NewLabel("")
		cell.Truncation = fyne.TextTruncateEllipsis
		row.Add(cell)
	}
	return row
}

func (t *networkTab) updateRow(id widget.ListItemID, o fyne.CanvasObject) {
	if id >= len(t.recent) {
		return
	}
	texts := EgressRecordTexts(t.recent[id])
	for i, cell := range o.(*fyne.Container).Objects {
		l := cell.(*widget.Label)
		l.Importance = widget.MediumImportance
		if i == 3 {
			switch texts[3] {
			case "Allowed":
				l.Importance = widget.SuccessImportance
			default:
				l.Importance = widget.DangerImportance
			}
		}
		l.SetText(texts[i])
	}
}

// reset forgets the previous sandbox's view.
func (t *networkTab) reset() {
	t.loadedID, t.net, t.recent, t.choice = "", sandbox.EgressNetwork{}, nil, nil
	t.list.UnselectAll()
	t.chosen.SetText(noChoice)
	t.shownRules, t.shownGlobal, t.shownPending = nil, nil, nil
	t.list.Refresh()
}

// refresh shows info, and reads its view of the gate again. Reads never
// overlap: one asked for while another runs happens when it ends.
func (t *networkTab) refresh(info sandbox.Info) {
	t.info = info
	t.showPending()
	eg, ok := t.u.b.(Egress)
	if !ok {
		t.show(info.ID, sandbox.EgressNetwork{Rules: info.EgressRules})
		return
	}
	if t.inflight {
		t.again = true
		return
	}
	t.inflight = true
	id := info.ID
	var n sandbox.EgressNetwork
	t.u.background(func(ctx context.Context) (err error) {
		n, err = eg.EgressNetwork(ctx, id)
		return err
	}, func(err error) {
		t.inflight = false
		if cur, ok := t.u.m.current(); ok && cur.ID == id && err == nil {
			t.show(id, n)
		}
		if t.again {
			t.again = false
			if cur, ok := t.u.m.current(); ok && t.u.detail.tabs.Selected().Text == "Network" {
				t.refresh(cur)
			}
		}
	})
}

// show fills the tab from n, rebuilding only what changed.
func (t *networkTab) show(id string, n sandbox.EgressNetwork) {
	if id == t.loadedID && reflect.DeepEqual(n, t.net) && t.mode.Text == NetworkModeText(t.info, n) {
		return
	}
	t.loadedID, t.net = id, n
	t.mode.SetText(NetworkModeText(t.info, n))
	if t.info.Spec.Network == sandbox.NetworkEgress {
		t.ruleBox.Show()
	} else {
		t.ruleBox.Hide() // rules decide nothing for a sandbox that does not use the gate
	}
	var rules []string
	for _, p := range n.Rules.Allow {
		rules = append(rules, "allow "+p)
	}
	for _, p := range n.Rules.Deny {
		rules = append(rules, "deny "+p)
	}
	if !slices.Equal(rules, t.shownRules) || len(t.rules.Objects) == 0 {
		t.shownRules = rules
		t.rules.RemoveAll()
		for _, p := range n.Rules.Allow {
			t.rules.Add(t.ruleRow("Allowed", widget.SuccessImportance, p, func() { t.removeRule(p) }))
		}
		for _, p := range n.Rules.Deny {
			t.rules.Add(t.ruleRow("Denied", widget.DangerImportance, p, func() { t.removeRule(p) }))
		}
		if len(rules) == 0 {
			none := widget.NewLabel("None. Answering a request with “always for this sandbox” adds one here.")
			none.Importance = widget.LowImportance
			t.rules.Add(none)
		}
	}
	if !slices.Equal(n.GlobalAllow, t.shownGlobal) || len(t.global.Objects) == 0 {
		t.shownGlobal = slices.Clone(n.GlobalAllow)
		t.global.RemoveAll()
		for _, p := range n.GlobalAllow {
			t.global.Add(t.ruleRow("Allowed", widget.SuccessImportance, p, func() { t.removeApproval(p) }))
		}
		if len(n.GlobalAllow) == 0 {
			none := widget.NewLabel("None. Answering a request with “allow for all sandboxes” adds one here.")
			none.Importance = widget.LowImportance
			t.global.Add(none)
		}
	}
	t.config.SetText(ConfigRulesText(n))
	t.recent = t.recent[:0]
	for i := len(n.Recent) - 1; i >= 0; i-- {
		t.recent = append(t.recent, n.Recent[i])
	}
	if len(t.recent) == 0 {
		t.empty.Show()
	} else {
		t.empty.Hide()
	}
	t.list.Refresh()
	t.keepChoice()
}

// keepChoice selects the chosen connection again where it moved to as new
// ones came in, or forgets it once it left the list.
func (t *networkTab) keepChoice() {
	if t.choice == nil {
		return
	}
	for i, r := range t.recent {
		if reflect.DeepEqual(r, *t.choice) {
			t.list.Select(i)
			return
		}
	}
	t.choice = nil
	t.list.UnselectAll()
	t.chosen.SetText(noChoice)
}

// showPending lists the selected sandbox's requests that wait, each with
// a button that brings its dialog up.
func (t *networkTab) showPending() {
	var mine []sandbox.EgressPending
	for _, p := range t.u.m.snap.Egress {
		if p.SandboxID == t.info.ID {
			mine = append(mine, p)
		}
	}
	if slices.Equal(mine, t.shownPending) {
		return
	}
	t.shownPending = mine
	t.pending.RemoveAll()
	for _, p := range mine {
		label := widget.NewLabel("Waits for your answer: " + EgressTarget(p.Host, p.Port))
		label.Importance = widget.WarningImportance
		label.Wrapping = fyne.TextWrapWord // never wider than the pane
		answer := widget.NewButtonWithIcon("Answer…", theme.QuestionIcon(), func() { t.u.egress.choose(p.ID) })
		answer.Importance = widget.HighImportance
		t.pending.Add(container.NewBorder(nil, nil, nil, answer, label))
	}
}

// ruleRow is one rule with its Remove button.
func (t *networkTab) ruleRow(kind string, imp widget.Importance, pattern string, remove func()) fyne.CanvasObject {
	k := widget.NewLabel(kind)
	k.Importance = imp
	p := widget.NewLabelWithStyle(pattern, fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	p.Selectable = true
	btn := widget.NewButtonWithIcon("Remove", theme.DeleteIcon(), remove)
	return container.NewBorder(nil, nil, container.NewGridWrap(fyne.NewSize(80, k.MinSize().Height), k), btn, p)
}

// addRule gives the sandbox a rule for the host typed, allow or deny,
// without waiting for it to ask (any request for it that waits is
// answered so).
func (t *networkTab) addRule(allow bool) {
	eg, ok := t.u.b.(Egress)
	target := strings.TrimSpace(t.host.Text)
	if !ok || target == "" {
		return
	}
	info := t.info
	answer, verb := sandbox.EgressAllowSandbox, "Allowed"
	if !allow {
		answer, verb = sandbox.EgressDenySandbox, "Denied"
	}
	t.u.background(func(ctx context.Context) error {
		_, err := eg.AnswerEgressHost(ctx, info.ID, target, answer)
		return err
	}, func(err error) {
		if err != nil {
			t.u.detail.showError("Add a rule for "+target, err)
			return
		}
		t.host.SetText("")
		t.u.detail.showInfo(verb + " " + target + " for " + info.Name + " from now on.")
		t.refreshNow()
	})
}

func (t *networkTab) removeRule(pattern string) {
	eg, ok := t.u.b.(Egress)
	if !ok {
		return
	}
	info := t.info
	t.u.background(func(ctx context.Context) error {
		return eg.RemoveEgressRule(ctx, info.ID, pattern)
	}, func(err error) {
		if err != nil {
			t.u.detail.showError("Remove rule "+pattern, err)
			return
		}
		t.u.detail.showInfo("Removed rule " + pattern + " of " + info.Name + ": its next connection to that host is decided anew.")
		t.refreshNow()
	})
}

func (t *networkTab) removeApproval(pattern string) {
	eg, ok := t.u.b.(Egress)
	if !ok {
		return
	}
	t.u.background(func(ctx context.Context) error {
		return eg.RemoveEgressApproval(ctx, pattern)
	}, func(err error) {
		if err != nil {
			t.u.detail.showError("Remove approval "+pattern, err)
			return
		}
		t.u.detail.showInfo("Removed " + pattern + " from the hosts every sandbox may reach.")
		t.refreshNow()
	})
}

// refreshNow reads the view again, when the tab still shows a sandbox.
func (t *networkTab) refreshNow() {
	if cur, ok := t.u.m.current(); ok {
		t.refresh(cur)
	}
}
