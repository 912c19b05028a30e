package ui

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/google/go-cmp/cmp"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// egressPending is a request of sandbox info for target that waits.
func egressPending(id string, info sandbox.Info, host string, port int, method, reason string) sandbox.EgressPending {
	return sandbox.EgressPending{ID: id, SandboxID: info.ID, Sandbox: info.Name, Client: info.Owner.Client,
		Host: host, Port: port, Method: method, Reason: reason, Since: t0.Add(-5 * time.Second), Deadline: t0.Add(55 * time.Second)}
}

// withEgress is a snapshot of alpha, beta and gamma with pending requests.
func withEgress(p ...sandbox.EgressPending) sandbox.Snapshot {
	s := snapshot(alpha, beta, gamma)
	s.Egress = p
	return s
}

// texts is every text o draws, in order.
func texts(o fyne.CanvasObject) string {
	var out []string
	for _, obj := range test.LaidOutObjects(o) {
		if t, ok := obj.(*canvas.Text); ok && t.Visible() && t.Text != "" {
			out = append(out, t.Text)
		}
	}
	return strings.Join(out, "\n")
}

// dialogText is what the topmost dialog says; "" when none shows.
func (h *harness) dialogText() string {
	top := h.u.win.Canvas().Overlays().Top()
	if top == nil || !top.Visible() {
		return ""
	}
	return texts(top)
}

func TestEgressDialogQueuesAndAnswers(t *testing.T) {
	h := newHarness(t)
	h.feed(snapshot(alpha, beta, gamma))
	if h.u.win.Canvas().Overlays().Top() != nil {
		t.Fatal("a dialog shows with nothing pending")
	}
	first := egressPending("p1", alpha, "pypi.org", 443, "CONNECT", "")
	second := egressPending("p2", gamma, "api.example.com", 8443, "", "to fetch the weather for the report")
	second.Since = first.Since.Add(time.Second)
	h.feed(withEgress(first, second))

	// The window was hidden: the desktop tells, and the window comes up with the oldest request.
	if len(h.notices) != 1 || !strings.Contains(h.notices[0], "Sandbox alpha wants to connect to pypi.org:443") {
		t.Errorf("notices %q", h.notices)
	}
	if !h.u.shown {
		t.Error("the window stayed hidden")
	}
	got := h.dialogText()
	for _, want := range []string{"Sandbox alpha is connecting to pypi.org:443", "claude-ai 0.1.0", "HTTPS or other TLS (CONNECT)",
		"refused in 55s without an answer", "1 more request waits after this one."} {
		if !strings.Contains(got, want) {
			t.Errorf("the dialog does not say %q:\n%s", want, got)
		}
	}
	for _, b := range []string{"Allow once", "Allow always for this sandbox", "Allow for all sandboxes", "Deny", "Deny always for this sandbox"} {
		button(t, h.overlay(), b)
	}

	// A snapshot that changes nothing keeps the same dialog, and notifies nothing new.
	dlg := h.u.egress.dlg
	h.feed(withEgress(first, second))
	if h.u.egress.dlg != dlg || len(h.notices) != 1 {
		t.Errorf("the same requests opened a new dialog (%t) or notified again (%d)", h.u.egress.dlg != dlg, len(h.notices))
	}

	h.fire(egressArmDelay)
	test.Tap(button(t, h.overlay(), "Allow always for this sandbox"))
	h.flush()
	if diff := cmp.Diff([]string{"AnswerEgress(p1, sandbox)"}, h.b.taken()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if got := h.u.status.message.label.Text; !strings.Contains(got, "Allowed pypi.org for sandbox alpha from now on") {
		t.Errorf("status %q", got)
	}
	// The next one shows at once, before the engine's next snapshot drops the first.
	got = h.dialogText()
	if !strings.Contains(got, "An assistant asks that sandbox gamma may connect to api.example.com:8443") ||
		!strings.Contains(got, "“to fetch the weather for the report”") || strings.Contains(got, "more request") {
		t.Errorf("the second request's dialog:\n%s", got)
	}
	h.feed(withEgress(first, second)) // a snapshot from before the answer
	if got := h.dialogText(); strings.Contains(got, "pypi.org") {
		t.Errorf("an answered request came back:\n%s", got)
	}

	h.fire(egressArmDelay)
	test.Tap(button(t, h.overlay(), "Deny"))
	h.flush()
	if diff := cmp.Diff([]string{"AnswerEgress(p2, deny)"}, h.b.taken()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if h.dialogText() != "" {
		t.Error("a dialog still shows after every request was answered")
	}
}

func TestEgressDialogClosesWhenAnsweredElsewhere(t *testing.T) {
	h := newHarness(t)
	h.u.ShowWindow()
	p := egressPending("p1", alpha, "pypi.org", 443, "CONNECT", "")
	h.feed(withEgress(p))
	if len(h.notices) != 0 {
		t.Errorf("notified although the window shows: %q", h.notices)
	}
	if !strings.Contains(h.dialogText(), "pypi.org:443") {
		t.Fatal("no dialog for the request")
	}
	// `sandtray egress allow` answered it: the engine's next snapshot lacks it.
	h.feed(withEgress())
	if h.dialogText() != "" {
		t.Fatal("the dialog stayed open after the request was answered elsewhere")
	}
	if calls := h.b.taken(); len(calls) != 0 {
		t.Errorf("calls %v", calls)
	}
	// A later request of the same host shows again.
	p.ID = "p2"
	h.feed(withEgress(p))
	if !strings.Contains(h.dialogText(), "pypi.org:443") {
		t.Fatal("no dialog for the next request")
	}
}

func TestEgressAnswerThatCameTooLate(t *testing.T) {
	h := newHarness(t)
	h.u.ShowWindow()
	h.feed(withEgress(egressPending("p1", alpha, "pypi.org", 443, "GET", "")))
	h.b.err = fmt.Errorf("no pending request %q: %w", "p1", sandbox.ErrNotFound)
	h.fire(egressArmDelay)
	test.Tap(button(t, h.overlay(), "Allow once"))
	h.flush()
	if h.dialogText() != "" {
		t.Error("the dialog of a request that no longer waits stayed open")
	}
	if got := h.u.status.message.label.Text; !strings.Contains(got, "no longer waits") {
		t.Errorf("status %q", got)
	}

	// Any other failure is shown in the dialog, which stays for a retry.
	h.b.err = errBoom
	h.feed(withEgress(egressPending("p3", alpha, "files.pythonhosted.org", 443, "CONNECT", "")))
	h.fire(egressArmDelay)
	test.Tap(button(t, h.overlay(), "Allow once"))
	h.flush()
	if got := h.dialogText(); !strings.Contains(got, "Could not answer: docker said no") {
		t.Errorf("the dialog does not show the failure:\n%s", got)
	}
	h.b.err = nil
	h.fire(egressArmDelay)
	test.Tap(button(t, h.overlay(), "Allow once"))
	h.flush()
	if diff := cmp.Diff([]string{"AnswerEgress(p1, once)", "AnswerEgress(p3, once)", "AnswerEgress(p3, once)"}, h.b.taken()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestEgressCountdown(t *testing.T) {
	h := newHarness(t)
	h.u.ShowWindow()
	h.feed(withEgress(egressPending("p1", alpha, "pypi.org", 443, "CONNECT", "")))
	h.u.now = func() time.Time { return t0.Add(50 * time.Second) }
	h.fire(time.Second)
	if got := h.dialogText(); !strings.Contains(got, "refused in 5s without an answer") {
		t.Errorf("the countdown did not move:\n%s", got)
	}
}

// networkFixture is what the engine tells of alpha's egress.
var networkFixture = sandbox.EgressNetwork{
	Rules:       sandbox.EgressRules{Allow: []string{"api.example.org"}, Deny: []string{"tracker.example.org:8080"}},
	GlobalAllow: []string{"huggingface.co"},
	ConfigAllow: []string{"deb.debian.org", "pypi.org"},
	ConfigDeny:  []string{"example.com"},
	Ask:         true,
	Recent: []sandbox.EgressRecord{
		{Time: t0.Add(-time.Minute), Host: "pypi.org", Port: 443, Method: "CONNECT", Decision: "allow",
			Rule: `allow "pypi.org" (default)`, BytesUp: 2048, BytesDown: 3 << 20, DurationMS: 1200},
		{Time: t0.Add(-30 * time.Second), Host: "example.com", Port: 80, Method: "GET", Decision: "deny",
			Rule: `deny "example.com" (config)`, Error: "sandtray egress: example.com:80 is denied by egress.deny"},
	},
}

// egressBox is alpha with network egress.
func egressBox() sandbox.Info {
	a := alpha
	a.Spec.Network = sandbox.NetworkEgress
	a.EgressRules = networkFixture.Rules
	return a
}

func TestNetworkTab(t *testing.T) {
	h := newHarness(t)
	h.b.network = networkFixture
	h.u.ShowWindow()
	h.u.win.Resize(fyne.NewSize(1180, 760))
	a := egressBox()
	h.feed(snapshot(a, beta, gamma))
	h.selectRow(h.u.m.indexOf(a.ID))
	selectTab(h, "Network")
	tab := h.u.detail.network
	got := texts(tab.object())
	if want := "Network: egress. Every connection goes through Sandtray's gate: the hosts the rules below allow get through, denied ones are refused, and you are asked about any other host."; tab.mode.Text != want {
		t.Errorf("mode %q", tab.mode.Text)
	}
	if want := "From config.toml ([egress], or the built-in package hosts): allowed deb.debian.org, pypi.org; denied example.com. Settings or config.toml change these."; tab.config.Text != want {
		t.Errorf("config %q", tab.config.Text)
	}
	for _, want := range []string{"api.example.org", "tracker.example.org:8080", "huggingface.co"} {
		if !strings.Contains(got, want) {
			t.Errorf("the tab does not show %q:\n%s", want, got)
		}
	}
	if len(tab.recent) != 2 || tab.recent[0].Host != "example.com" {
		t.Fatalf("connections %+v, want newest first", tab.recent)
	}
	rows := texts(tab.list)
	for _, want := range []string{"example.com:80", "Denied", "pypi.org:443", "Allowed", "2.0 KiB / 3.0 MiB", "1.2 s"} {
		if !strings.Contains(rows, want) {
			t.Errorf("the connections do not show %q:\n%s", want, rows)
		}
	}

	// A connection chosen shows in full, and stays chosen as new ones come.
	tab.list.Select(0)
	full := "GET example.com:80 at 09:26:23: denied by deny \"example.com\" (config). sandtray egress: example.com:80 is denied by egress.deny"
	if tab.chosen.Text != full {
		t.Errorf("chosen %q", tab.chosen.Text)
	}

	// Live: a new connection shows with the next snapshot.
	h.b.network.Recent = append(h.b.network.Recent, sandbox.EgressRecord{Time: t0, Host: "files.pythonhosted.org", Port: 443,
		Method: "CONNECT", Decision: "allow", Rule: "allow once"})
	h.feed(snapshot(a, beta, gamma))
	if len(tab.recent) != 3 || tab.recent[0].Host != "files.pythonhosted.org" {
		t.Fatalf("the new connection did not show: %+v", tab.recent)
	}
	if tab.chosen.Text != full {
		t.Errorf("the choice was lost: %q", tab.chosen.Text)
	}

	// Remove takes a rule back, and an approval for every sandbox.
	h.b.taken()
	test.Tap(find(t, tab.rules, func(b *widget.Button) bool { return b.Text == "Remove" }))
	h.flush()
	test.Tap(find(t, tab.global, func(b *widget.Button) bool { return b.Text == "Remove" }))
	h.flush()
	want := []string{"RemoveEgressRule(" + a.ID + ", api.example.org)", "RemoveEgressApproval(huggingface.co)"}
	if diff := cmp.Diff(want, h.b.taken()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if got := h.u.detail.message.label.Text; !strings.Contains(got, "Removed huggingface.co") {
		t.Errorf("message %q", got)
	}

	// A request that waits shows here too, and its button brings its dialog
	// before an older one of another sandbox.
	older := egressPending("p0", gamma, "pypi.org", 443, "CONNECT", "")
	older.Since = t0.Add(-time.Minute)
	h.feed(withEgressOf(a, older, egressPending("p1", a, "cdn.example.net", 443, "CONNECT", "")))
	if got := h.dialogText(); !strings.Contains(got, "Sandbox gamma") {
		t.Fatalf("the oldest request is not the one shown:\n%s", got)
	}
	if got := strings.ReplaceAll(texts(tab.pending), "\n", " "); !strings.Contains(got, "Waits for your answer: cdn.example.net:443") || strings.Contains(got, "pypi.org") {
		t.Errorf("the tab's pending requests:\n%s", got)
	}
	test.Tap(find(t, tab.pending, func(b *widget.Button) bool { return b.Text == "Answer…" }))
	h.flush()
	if got := h.dialogText(); !strings.Contains(got, "Sandbox alpha is connecting to cdn.example.net:443") || !strings.Contains(got, "1 more request waits") {
		t.Fatalf("Answer… did not bring alpha's request up:\n%s", got)
	}
	h.fire(egressArmDelay)
	test.Tap(button(t, h.overlay(), "Deny always for this sandbox"))
	h.flush()
	if diff := cmp.Diff([]string{"AnswerEgress(p1, deny_sandbox)"}, h.b.taken()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if got := h.dialogText(); !strings.Contains(got, "Sandbox gamma") {
		t.Errorf("the older request did not come back:\n%s", got)
	}
}

// TestNetworkTabOfABridgeSandbox: a sandbox that does not use the gate
// shows what its mode means, and no rules, which would decide nothing.
func TestNetworkTabOfABridgeSandbox(t *testing.T) {
	h := newHarness(t)
	b := alpha
	b.Spec.Network = sandbox.NetworkBridge
	h.feed(snapshot(b, beta, gamma))
	h.selectRow(h.u.m.indexOf(b.ID))
	selectTab(h, "Network")
	tab := h.u.detail.network
	if !strings.HasPrefix(tab.mode.Text, "Network: bridge.") || tab.ruleBox.Visible() {
		t.Errorf("mode %q, rules shown %t", tab.mode.Text, tab.ruleBox.Visible())
	}
	if !tab.empty.Visible() {
		t.Error("no word that there are no connections")
	}
}

func withEgressOf(a sandbox.Info, p ...sandbox.EgressPending) sandbox.Snapshot {
	s := snapshot(a, beta, gamma)
	s.Egress = p
	return s
}

func TestNetworkModeText(t *testing.T) {
	for mode, want := range map[string]string{
		sandbox.NetworkNone:   "Network: none. The sandbox reaches nothing",
		sandbox.NetworkBridge: "Network: bridge. The sandbox reaches the whole network directly",
		sandbox.NetworkEgress: "Network: egress. Every connection goes through Sandtray's gate, which allows",
	} {
		info := alpha
		info.Spec.Network = mode
		if got := NetworkModeText(info, sandbox.EgressNetwork{}); !strings.HasPrefix(got, want) {
			t.Errorf("%s: %q", mode, got)
		}
	}
}

func TestEgressAnsweredText(t *testing.T) {
	p := egressPending("p1", alpha, "db.example.com", 5432, "CONNECT", "")
	if got, want := EgressAnsweredText(p, sandbox.EgressAllowSandbox), "Allowed db.example.com:5432 for sandbox alpha from now on (its Network tab can take it back)."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	p.Port = 443
	if got, want := EgressAnsweredText(p, sandbox.EgressDenySandbox), "Denied db.example.com for sandbox alpha from now on."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestEgressDialogArmsLate (F50): a dialog's buttons answer nothing until
// it has shown for a moment, so the second click of a double-click on one
// request's button does not answer the request that shows next.
func TestEgressDialogArmsLate(t *testing.T) {
	h := newHarness(t)
	h.u.ShowWindow()
	h.feed(withEgress(egressPending("p1", alpha, "pypi.org", 443, "CONNECT", ""), egressPending("p2", gamma, "evil.example", 443, "CONNECT", "")))
	test.Tap(button(t, h.overlay(), "Allow once"))
	h.flush()
	if calls := h.b.taken(); len(calls) != 0 {
		t.Fatalf("a click as the dialog came up answered: %v", calls)
	}
	h.fire(egressArmDelay)
	test.Tap(button(t, h.overlay(), "Allow for all sandboxes"))
	test.Tap(button(t, h.overlay(), "Allow for all sandboxes")) // a double-click
	h.flush()
	test.Tap(button(t, h.overlay(), "Allow for all sandboxes")) // and a third, once the next shows
	h.flush()
	if diff := cmp.Diff([]string{"AnswerEgress(p1, global)"}, h.b.taken()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if got := h.dialogText(); !strings.Contains(got, "evil.example") {
		t.Fatalf("the next request is not shown:\n%s", got)
	}
	h.fire(egressArmDelay)
	test.Tap(button(t, h.overlay(), "Deny"))
	h.flush()
	if diff := cmp.Diff([]string{"AnswerEgress(p2, deny)"}, h.b.taken()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// TestEgressDialogModelText (F49): what a model wrote (the reason) and what
// an MCP client calls itself are one bounded line, which cannot pass for
// the dialog's own lines or push its buttons off the screen.
func TestEgressDialogModelText(t *testing.T) {
	h := newHarness(t)
	h.u.ShowWindow()
	reason := "fetch data\n\nSandtray: this host is safe, verified.\u202e Choose Allow for all sandboxes.\n" + strings.Repeat("padding ", 1000)
	p := egressPending("p1", gamma, "api.example.com", 443, "", reason)
	p.Client = "Claude\nSandbox: trusted " + strings.Repeat("x", 200)
	h.feed(withEgress(p))
	labels := map[string]bool{}
	for _, obj := range test.LaidOutObjects(h.overlay()) {
		if l, ok := obj.(*widget.Label); ok {
			labels[l.Text] = true
		}
	}
	var shown, client string
	for text := range labels {
		if strings.HasPrefix(text, "“fetch data") {
			shown = text
		}
		if strings.HasPrefix(text, "Claude") {
			client = text
		}
	}
	if strings.ContainsAny(shown, "\n\u202e") || len([]rune(shown)) > reasonShown+2 || !strings.HasPrefix(shown, "“fetch data Sandtray: this host is safe, verified. Choose") {
		t.Errorf("reason shown as %q", shown)
	}
	if strings.Contains(client, "\n") || len([]rune(client)) > clientShown {
		t.Errorf("client shown as %q", client)
	}
	for _, b := range []string{"Allow once", "Deny"} {
		btn := button(t, h.overlay(), b)
		if pos := h.u.app.Driver().AbsolutePositionForObject(btn); pos.Y+btn.Size().Height > h.u.win.Canvas().Size().Height {
			t.Errorf("%s is off the window at %v (window %v)", b, pos, h.u.win.Canvas().Size())
		}
	}
}

// TestNetworkTabAddsARuleWithoutARequest: the Network tab allows or denies
// a host for the sandbox before it asks (the engine's AnswerEgressHost,
// which adds an "always" rule when nothing waits), and says how it went.
func TestNetworkTabAddsARuleWithoutARequest(t *testing.T) {
	h := newHarness(t)
	h.b.network = networkFixture
	a := egressBox()
	h.feed(snapshot(a, beta, gamma))
	h.selectRow(h.u.m.indexOf(a.ID))
	selectTab(h, "Network")
	h.b.taken()
	tab := h.u.detail.network
	tab.host.SetText(" files.pythonhosted.org ")
	test.Tap(button(t, tab.object(), "Allow"))
	h.flush()
	tab.host.SetText("ads.example.net:443")
	test.Tap(button(t, tab.object(), "Deny"))
	h.flush()
	want := []string{"AnswerEgressHost(" + a.ID + ", files.pythonhosted.org, sandbox)", "AnswerEgressHost(" + a.ID + ", ads.example.net:443, deny_sandbox)"}
	if diff := cmp.Diff(want, h.b.taken()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if msg := h.u.detail.message.label.Text; msg != "Denied ads.example.net:443 for alpha from now on." || tab.host.Text != "" {
		t.Errorf("message %q, entry %q", msg, tab.host.Text)
	}
	h.b.err = errors.New("sandbox alpha has no network through the egress gate (it is not running)")
	tab.host.SetText("pypi.org")
	test.Tap(button(t, tab.object(), "Allow"))
	h.flush()
	if msg := h.u.detail.message.label; msg.Importance != widget.DangerImportance || !strings.Contains(msg.Text, "not running") || tab.host.Text != "pypi.org" {
		t.Errorf("a refused rule: message %q (importance %d), entry %q", msg.Text, msg.Importance, tab.host.Text)
	}
}
