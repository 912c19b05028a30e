package ui

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/google/go-cmp/cmp"
)

// fakeSettings holds settings in memory and refuses what refuse says.
type fakeSettings struct {
	fields []SettingField
	saves  [][]SettingField
	refuse func([]SettingField) error
	// live: the engine applies a save at once, but for its Restart fields.
	live bool
}

func newFakeSettings() *fakeSettings {
	return &fakeSettings{fields: []SettingField{
		{Key: "default_image", Label: "Default image", Group: "Sandboxes", Kind: SettingText, Value: "sandtray/sandbox:latest"},
		{Key: "limits.memory_mb", Label: "Memory (MB)", Group: "Sandboxes", Kind: SettingInt, Value: "1024"},
		{Key: "limits.exec_timeout", Label: "Command timeout", Group: "Sandboxes", Kind: SettingDuration, Value: "30s"},
		{Key: "sandbox.network", Label: "Network", Group: "Network", Kind: SettingChoice, Value: "none", Choices: []string{"none", "bridge"}},
		{Key: "sandbox.allow_network", Label: "Assistants may ask for a network", Group: "Network", Kind: SettingBool, Value: "true"},
		{Key: "host.allowed_roots", Label: "Host folders", Group: "Host folders", Kind: SettingFolders, List: []string{"/home/me/Sandtray"}, Restart: true},
		{Key: "pool.size", Label: "Warm sandboxes per image", Group: "Warm pool", Kind: SettingInt, Value: "2", Restart: true},
	}}
}

func (f *fakeSettings) Path() string { return "/home/me/.config/sandtray/config.toml" }

func (f *fakeSettings) Fields() ([]SettingField, error) { return slices.Clone(f.fields), nil }

func (f *fakeSettings) Save(fields []SettingField) (SettingsSaved, error) {
	f.saves = append(f.saves, fields)
	if f.refuse != nil {
		if err := f.refuse(fields); err != nil {
			return SettingsSaved{}, err
		}
	}
	var changed []string
	for i, n := range fields {
		if n.Value != f.fields[i].Value || !slices.Equal(n.List, f.fields[i].List) {
			changed = append(changed, n.Key)
		}
	}
	f.fields = fields
	saved := SettingsSaved{Changed: changed, Applied: f.live}
	for i, key := range changed {
		if f.live && fields[slices.IndexFunc(fields, func(f SettingField) bool { return f.Key == key })].Restart {
			saved.Restart = append(saved.Restart, changed[i])
		}
	}
	return saved, nil
}

func settingsHarness(t *testing.T) (*harness, *fakeSettings) {
	store := newFakeSettings()
	h := newHarness(t, func(o *Options) { o.Settings = store })
	h.u.showSettings()
	return h, store
}

// entryFor is the entry of a setting, found by its current text.
func entryFor(t *testing.T, h *harness, text string) *widget.Entry {
	t.Helper()
	return find(t, h.u.settings.win.Content(), func(e *widget.Entry) bool { return e.Text == text })
}

func TestSettingsSaveChangedValues(t *testing.T) {
	h, store := settingsHarness(t)
	content := h.u.settings.win.Content()
	entryFor(t, h, "1024").SetText("2048")
	find(t, content, func(r *widget.RadioGroup) bool { return true }).SetSelected("bridge")
	find(t, content, func(c *widget.Check) bool { return true }).SetChecked(false)
	h.folder = "/srv/data"
	test.Tap(button(t, content, "Add folder…"))
	entryFor(t, h, "2").SetText("0")
	test.Tap(button(t, content, "Save"))
	h.flush()

	if len(store.saves) != 1 {
		t.Fatalf("saved %d times, want once", len(store.saves))
	}
	got := map[string]string{}
	for _, f := range store.saves[0] {
		got[f.Key] = f.Value + strings.Join(f.List, ",")
	}
	want := map[string]string{
		"default_image": "sandtray/sandbox:latest", "limits.memory_mb": "2048", "limits.exec_timeout": "30s",
		"sandbox.network": "bridge", "sandbox.allow_network": "false",
		"host.allowed_roots": "/home/me/Sandtray,/srv/data", "pool.size": "0",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("saved (-want +got):\n%s", diff)
	}
	msg := h.u.settings.message
	for _, part := range []string{"Saved to config.toml", "Quit Sandtray… in the Sandtray menu",
		"When Sandtray restarts: Memory (MB), Network, Assistants may ask for a network, Host folders, Warm sandboxes per image."} {
		if !strings.Contains(msg.Text, part) {
			t.Errorf("message %q lacks %q", msg.Text, part)
		}
	}

	// Removing a folder.
	rm := find(t, content, func(b *widget.Button) bool { return b.Text == "" && b.Visible() })
	test.Tap(rm)
	test.Tap(button(t, content, "Save"))
	h.flush()
	if roots := store.fields[5].List; !slices.Equal(roots, []string{"/srv/data"}) {
		t.Errorf("after removing the first folder: %v", roots)
	}
}

func TestSettingsValidation(t *testing.T) {
	h, store := settingsHarness(t)
	content := h.u.settings.win.Content()

	// A value the entry itself refuses never reaches the store.
	entryFor(t, h, "1024").SetText("lots")
	test.Tap(button(t, content, "Save"))
	h.flush()
	msg := h.u.settings.message
	if len(store.saves) != 0 || msg.Importance != widget.DangerImportance ||
		msg.Text != "Not saved: limits.memory_mb must be a whole number." {
		t.Errorf("after “lots”: %d saves, message %q", len(store.saves), msg.Text)
	}
	entryFor(t, h, "lots").SetText("8")
	entryFor(t, h, "30s").SetText("30")
	test.Tap(button(t, content, "Save"))
	h.flush()
	if !strings.Contains(msg.Text, `limits.exec_timeout must be a duration such as "30 s"`) {
		t.Errorf("after “30”: message %q", msg.Text)
	}

	// The store's (the config loader's) refusal is shown and nothing saved.
	entryFor(t, h, "30").SetText("1m")
	store.refuse = func([]SettingField) error {
		return errors.New("limits.memory_mb must be at least 16: invalid argument")
	}
	test.Tap(button(t, content, "Save"))
	h.flush()
	if want := "Not saved: limits.memory_mb must be at least 16: invalid argument. config.toml was not changed."; msg.Text != want {
		t.Errorf("message = %q, want %q", msg.Text, want)
	}
	if store.fields[1].Value != "1024" {
		t.Errorf("the refused value was kept: %v", store.fields[1].Value)
	}
	if button(t, content, "Save").Disabled() {
		t.Error("Save stays disabled after a refusal")
	}
}

func TestSettingsSavedTextNothingChanged(t *testing.T) {
	if got := SettingsSavedText(SettingsSaved{}, nil, "config.toml"); got != "Nothing changed." {
		t.Errorf("got %q", got)
	}
	got := SettingsSavedText(SettingsSaved{Changed: []string{"pool.size"}, Rewritten: true, Backup: "/c/config.toml.bak"},
		newFakeSettings().fields, "config.toml")
	if !strings.Contains(got, "/c/config.toml.bak") || !strings.Contains(got, "written whole") {
		t.Errorf("a rewrite is not explained: %q", got)
	}
}

// TestSettingsOfferRestartNow: with a host that can restart, a save that
// changed something offers Restart now, which asks the host to restart; the
// form is one scroll area, with no card or scroll of its own inside; no
// text points at a tray.
func TestSettingsOfferRestartNow(t *testing.T) {
	store := newFakeSettings()
	restarts := 0
	h := newHarness(t, func(o *Options) { o.Settings, o.Restart = store, func() { restarts++ } })
	h.u.showSettings()
	content := h.u.settings.win.Content()
	scrolls := 0
	for _, o := range test.LaidOutObjects(content) {
		switch o.(type) {
		case *container.Scroll:
			if o.Visible() {
				scrolls++
			}
		case *widget.Card:
			t.Error("a card in the settings form")
		}
	}
	if scrolls != 1 {
		t.Errorf("%d scroll areas in the Settings window; want one", scrolls)
	}
	if h.u.settings.restart.Visible() {
		t.Error("Restart now shows before anything changed")
	}
	entryFor(t, h, "1024").SetText("2048")
	test.Tap(button(t, content, "Save"))
	h.flush()
	msg := h.u.settings.message.Text
	if !strings.Contains(msg, "Restart now applies them") || strings.Contains(msg, " tray") {
		t.Errorf("message %q", msg)
	}
	test.Tap(button(t, content, "Restart now"))
	if restarts != 1 {
		t.Errorf("Restart now restarted %d times", restarts)
	}
}

// TestSettingsApplyLive: with an engine that applies settings as they are
// saved, a changed limit says it applies now and offers no restart; a
// change that waits for one names itself and offers Restart now.
func TestSettingsApplyLive(t *testing.T) {
	store := newFakeSettings()
	store.live = true
	h := newHarness(t, func(o *Options) { o.Settings, o.Restart = store, func() {} })
	h.u.showSettings()
	content := h.u.settings.win.Content()
	entryFor(t, h, "1024").SetText("2048")
	test.Tap(button(t, content, "Save"))
	h.flush()
	msg := h.u.settings.message.Text
	if !strings.Contains(msg, "Applied now: Memory (MB)") || strings.Contains(msg, "restart") {
		t.Errorf("message %q", msg)
	}
	if h.u.settings.restart.Visible() {
		t.Error("Restart now offered for a change that applied")
	}
	entryFor(t, h, "2").SetText("4")
	test.Tap(button(t, content, "Save"))
	h.flush()
	msg = h.u.settings.message.Text
	if !strings.Contains(msg, "When Sandtray restarts: Warm sandboxes per image.") || strings.Contains(msg, "Applied now") {
		t.Errorf("message %q", msg)
	}
	if !h.u.settings.restart.Visible() {
		t.Error("no Restart now for a change that waits for one")
	}
}

// TestSettingsRefuseAnImageDockerLacks: a default image Docker does not
// have is refused before it is saved (every assistant's next sandbox
// would fail), saying what to do; Sandtray's own image, which it builds
// on first use, is saved with a note; an image Docker has is saved.
func TestSettingsRefuseAnImageDockerLacks(t *testing.T) {
	store := newFakeSettings()
	imgs := &imageSet{present: map[string]bool{"python:3.12-slim": true}}
	h := newHarness(t, func(o *Options) { o.Settings, o.Images = store, imgs })
	h.u.showSettings()
	content := h.u.settings.win.Content()
	entryFor(t, h, "sandtray/sandbox:latest").SetText("ghcr.io/me/notthere:1")
	test.Tap(button(t, content, "Save"))
	h.flush()
	msg := h.u.settings.message
	if len(store.saves) != 0 || msg.Importance != widget.DangerImportance || !strings.Contains(msg.Text, "Docker has no image ghcr.io/me/notthere:1") ||
		!strings.Contains(msg.Text, "docker pull ghcr.io/me/notthere:1") {
		t.Errorf("%d saves, message %q; want the image refused before saving", len(store.saves), msg.Text)
	}
	entryFor(t, h, "ghcr.io/me/notthere:1").SetText("python:3.12-slim")
	test.Tap(button(t, content, "Save"))
	h.flush()
	if len(store.saves) != 1 || msg.Importance == widget.DangerImportance {
		t.Errorf("an image Docker has: %d saves, message %q", len(store.saves), msg.Text)
	}
	entryFor(t, h, "python:3.12-slim").SetText("sandtray/sandbox:latest")
	imgs.buildable = "sandtray/sandbox:latest"
	test.Tap(button(t, content, "Save"))
	h.flush()
	if len(store.saves) != 2 || !strings.Contains(msg.Text, "Sandtray builds it when the first sandbox needs it") {
		t.Errorf("Sandtray's own image, missing: %d saves, message %q", len(store.saves), msg.Text)
	}
}

// imageSet is Images over a set of images Docker has.
type imageSet struct {
	present   map[string]bool
	buildable string
}

func (s *imageSet) ImageState(_ context.Context, ref string) (ImageState, error) {
	return ImageState{Ref: ref, Present: s.present[ref], Buildable: ref == s.buildable}, nil
}

func (s *imageSet) BuildImage(context.Context, func(ImageProgress)) error { return nil }
