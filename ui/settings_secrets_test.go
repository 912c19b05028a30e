package ui

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// fakeSecretSettings is fakeSettings with secrets; values are kept apart,
// as the keychain keeps them.
type fakeSecretSettings struct {
	*fakeSettings
	list   []SecretEntry
	values map[string]string
}

func (f *fakeSecretSettings) Secrets() ([]SecretEntry, error) { return slices.Clone(f.list), nil }
func (f *fakeSecretSettings) SecretsWhere() string            { return "the OS keychain" }
func (f *fakeSecretSettings) AddSecret(name, value string, hosts []string) error {
	if strings.Contains(strings.Join(hosts, ""), "!") {
		return errors.New(`secrets.` + name + `.hosts[0]: egress rule "bad!" is not a host name`)
	}
	f.list = append(f.list, SecretEntry{Name: name, Hosts: hosts, Source: "keychain", HasValue: true})
	f.values[name] = value
	return nil
}
func (f *fakeSecretSettings) BindSecret(name string, hosts []string) error {
	for i := range f.list {
		if f.list[i].Name == name {
			f.list[i].Hosts = hosts
		}
	}
	return nil
}
func (f *fakeSecretSettings) RemoveSecret(name string) error {
	f.list = slices.DeleteFunc(f.list, func(s SecretEntry) bool { return s.Name == name })
	delete(f.values, name)
	return nil
}

// formTexts is every text the window shows: labels, entries (as drawn: a
// password entry shows dots), hints.
func formTexts(o fyne.CanvasObject) string {
	var b strings.Builder
	for _, c := range test.LaidOutObjects(o) {
		switch w := c.(type) {
		case *widget.Label:
			b.WriteString(w.Text + "\n")
		case *widget.Entry:
			if !w.Password {
				b.WriteString(w.Text + "\n")
			}
		case *widget.Form:
			for _, it := range w.Items {
				b.WriteString(it.Text + " " + it.HintText + "\n")
			}
		}
	}
	return b.String()
}

func TestSettingsSecretsAddBindRemove(t *testing.T) {
	store := &fakeSecretSettings{fakeSettings: newFakeSettings(), values: map[string]string{},
		list: []SecretEntry{{Name: "GH_TOKEN", Hosts: []string{"api.github.com"}, Source: "env GH_TOKEN", HasValue: true}}}
	h := newHarness(t, func(o *Options) { o.Settings = store })
	h.u.showSettings()
	win := h.u.settings.win
	win.Resize(fyne.NewSize(720, 2000))
	content := win.Content()
	sec := h.u.settings.secrets
	if sec == nil {
		t.Fatal("no Secrets section")
	}
	if got := formTexts(content); !strings.Contains(got, "Secrets\n") || !strings.Contains(got, "GH_TOKEN value: ••••••••  (env GH_TOKEN)") {
		t.Fatalf("section:\n%s", got)
	}

	// Add: the value goes to the store and leaves the form.
	const value = "sk-live-abcdef0123456789"
	if !sec.value.Password {
		t.Fatal("the value entry is not masked")
	}
	test.Type(sec.name, "OPENAI_API_KEY")
	test.Type(sec.value, value)
	test.Type(sec.hosts, "api.openai.com, *.openai.azure.com")
	test.Tap(button(t, content, "Add secret"))
	h.flush()
	if store.values["OPENAI_API_KEY"] != value || !slices.Equal(store.list[1].Hosts, []string{"api.openai.com", "*.openai.azure.com"}) {
		t.Fatalf("stored %+v %v", store.list, store.values)
	}
	if sec.value.Text != "" {
		t.Fatal("the value is still in the form")
	}
	shown := formTexts(content)
	if strings.Contains(shown, value) || !strings.Contains(shown, "Added OPENAI_API_KEY for api.openai.com, *.openai.azure.com") ||
		!strings.Contains(shown, "OPENAI_API_KEY value: ••••••••  (keychain)") {
		t.Fatalf("after add:\n%s", shown)
	}

	// A host the store refuses: the error, and nothing added.
	test.Type(sec.name, "BAD")
	test.Type(sec.value, "x")
	test.Type(sec.hosts, "bad!")
	test.Tap(button(t, content, "Add secret"))
	h.flush()
	if sec.msg.Importance != widget.DangerImportance || !strings.Contains(sec.msg.Text, "Not changed: secrets.BAD.hosts[0]") || len(store.list) != 2 {
		t.Fatalf("refused add: %q %+v", sec.msg.Text, store.list)
	}
	if sec.value.Text != "" {
		t.Fatal("a refused add left the value in the form")
	}

	// Bind: the hosts entry of the row, then Bind.
	hosts := find(t, content, func(e *widget.Entry) bool { return e.Text == "api.github.com" })
	hosts.SetText("api.github.com, uploads.github.com")
	binds := findAll(content, func(b *widget.Button) bool { return b.Text == "Bind" })
	test.Tap(binds[0])
	h.flush()
	if !slices.Equal(store.list[0].Hosts, []string{"api.github.com", "uploads.github.com"}) {
		t.Fatalf("bound %v", store.list[0].Hosts)
	}

	// Remove, confirmed.
	removes := findAll(content, func(b *widget.Button) bool { return b.Text == "" && b.Icon != nil && b.Visible() && inSecrets(sec, b) })
	test.Tap(removes[0])
	top := win.Canvas().Overlays().Top()
	if top == nil {
		t.Fatal("Remove asks nothing")
	}
	confirm := find(t, top, func(b *widget.Button) bool { return b.Text == "Yes" })
	test.Tap(confirm)
	h.flush()
	if len(store.list) != 1 || store.list[0].Name != "OPENAI_API_KEY" {
		t.Fatalf("after remove: %+v", store.list)
	}
}

// findAll is every widget of type T under o that ok accepts.
func findAll[T fyne.CanvasObject](o fyne.CanvasObject, ok func(T) bool) []T {
	var out []T
	for _, c := range test.LaidOutObjects(o) {
		if w, is := c.(T); is && ok(w) {
			out = append(out, w)
		}
	}
	return out
}

// inSecrets reports whether b is inside the Secrets section.
func inSecrets(sec *secretsSection, b *widget.Button) bool {
	for _, c := range test.LaidOutObjects(sec.box) {
		if c == b {
			return true
		}
	}
	return false
}
