package ui

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// shown lists the texts o draws, line by line.
func shown(o fyne.CanvasObject) string {
	var b strings.Builder
	for _, obj := range test.LaidOutObjects(o) {
		if tx, ok := obj.(*canvas.Text); ok && tx.Visible() {
			b.WriteString(tx.Text + "\n")
		}
	}
	return b.String()
}

// TestProblemWindow: the window shown while the engine cannot start says
// why in red and what to do; a config problem shows the file's lines
// around the one at fault, marked, the key meant, and opens the file;
// Docker's offers Start Docker Desktop; Try again asks again.
func TestProblemWindow(t *testing.T) {
	a := test.NewTempApp(t)
	tries, quits := 0, 0
	p := NewProblemWindow(a, func() { tries++ }, func() { quits++ }, nil)
	var opened []string
	p.u.openURL = func(u *url.URL) error { opened = append(opened, u.Path); return nil }
	file := "# mine\ndefault_image = \"python:3.12\"\n[limits]\ncpus = 1\nmemory = 512\n"
	p.Show(Problem{Title: "Sandtray cannot start: its config file has an error", Detail: `config /h/config.toml: unknown key "limits.memory"`,
		Hint: "Fix the line", Config: &ConfigProblem{Path: "/h/config.toml", Line: 5, Key: "limits.memory", Suggest: "limits.memory_mb", Text: file}})
	p.win.Resize(fyne.NewSize(760, 520))
	text := shown(p.win.Content())
	for _, want := range []string{`"limits.memory" is not a setting: did you mean limits.memory_mb?`, "→    5  memory = 512", "     4  cpus = 1", "/h/config.toml"} {
		if !strings.Contains(text, want) {
			t.Errorf("the window does not show %q:\n%s", want, text)
		}
	}
	if p.detail.Importance != widget.DangerImportance {
		t.Error("the reason is not in red")
	}
	if b := button(t, p.win.Content(), "Open config.toml in editor"); b != nil {
		test.Tap(b)
	}
	if len(opened) != 1 || opened[0] != "/h/config.toml" {
		t.Errorf("Open in editor opened %q", opened)
	}
	for _, o := range test.LaidOutObjects(p.win.Content()) {
		if b, ok := o.(*widget.Button); ok && b.Text == "Start Docker Desktop" && b.Visible() {
			t.Error("Start Docker Desktop offered for a config problem")
		}
	}
	started := 0
	p.Show(Problem{Title: "Sandtray cannot reach Docker", Detail: "cannot reach the Docker daemon", RetryEvery: 10 * time.Second,
		StartDocker: func() error { started++; return errors.New("not installed") }})
	if !strings.Contains(p.status.Text, "tries again every 10 s") {
		t.Errorf("status %q; want it to say when it tries again", p.status.Text)
	}
	test.Tap(button(t, p.win.Content(), "Start Docker Desktop"))
	if started != 1 || !strings.Contains(p.status.Text, "not installed") {
		t.Errorf("Start Docker Desktop: %d starts, status %q", started, p.status.Text)
	}
	test.Tap(button(t, p.win.Content(), "Try again"))
	if tries != 1 || p.status.Text != "Trying again…" || !p.retry.Disabled() {
		t.Errorf("Try again: %d tries, status %q", tries, p.status.Text)
	}
	test.Tap(button(t, p.win.Content(), "Quit Sandtray"))
	if quits != 1 {
		t.Errorf("Quit: %d", quits)
	}
}

// problemSettings is Settings whose file the engine refuses.
type problemSettings struct{ *fakeSettings }

func (problemSettings) Fields() ([]SettingField, error) {
	return nil, errors.New(`config /h/config.toml: unknown key "limits.memory"`)
}

func (problemSettings) Problem() (ConfigProblem, bool) {
	return ConfigProblem{Path: "/h/config.toml", Line: 2, Key: "limits.memory", Suggest: "limits.memory_mb", Text: "[limits]\nmemory = 512\n"}, true
}

// TestSettingsShowABrokenConfigsLine: Settings on a file the engine refuses
// shows the file's line at fault and Open in editor, and saves nothing.
func TestSettingsShowABrokenConfigsLine(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.Settings = problemSettings{newFakeSettings()} })
	h.u.showSettings()
	w := h.u.settings.win
	w.Resize(fyne.NewSize(720, 680))
	text := shown(w.Content())
	for _, want := range []string{"cannot be edited here", "→    2  memory = 512", "did you mean limits.memory_mb?"} {
		if !strings.Contains(text, want) {
			t.Errorf("Settings does not show %q:\n%s", want, text)
		}
	}
	button(t, w.Content(), "Open config.toml in editor")
	if !h.u.settings.save.Disabled() {
		t.Error("Save is enabled on a file that cannot be read")
	}
}
