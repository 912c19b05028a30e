package ui

import (
	"context"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// SecretEntry is one secret as the Settings window shows it: its name, the
// hosts it is bound to and where its value comes from; never the value.
type SecretEntry struct {
	Name     string
	Hosts    []string
	Source   string // "keychain", "env VAR" or "file PATH"
	HasValue bool
}

// SecretSettings is what the Settings window's Secrets section needs: a
// Settings that also has it shows the section. Each change is written at
// once (config.toml's [secrets.NAME], the value to the OS keychain).
type SecretSettings interface {
	Secrets() ([]SecretEntry, error)
	AddSecret(name, value string, hosts []string) error
	BindSecret(name string, hosts []string) error
	RemoveSecret(name string) error
	SecretsWhere() string // where values are kept
}

// secretsSection is the Secrets section: each secret with its hosts (an
// entry and Bind), Remove, and a form that adds one with a masked value
// that is never shown again.
type secretsSection struct {
	s     *settingsWindow
	store SecretSettings
	box   *fyne.Container
	msg   *widget.Label
	// the add form
	name, value, hosts *widget.Entry
}

// addSecretsSection adds the section to the window's body when its
// Settings has secrets.
func (s *settingsWindow) addSecretsSection() {
	store, ok := s.u.opts.Settings.(SecretSettings)
	if !ok {
		return
	}
	if s.secrets == nil {
		s.secrets = &secretsSection{s: s, store: store, box: container.NewVBox(), msg: widget.NewLabel("")}
		s.secrets.msg.Wrapping = fyne.TextWrapWord
		s.secrets.msg.Hide()
	}
	heading := widget.NewLabelWithStyle("Secrets", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	heading.SizeName = theme.SizeNameSubHeadingText
	s.body.Add(heading)
	s.body.Add(s.secrets.box)
	s.secrets.render()
}

// parseHosts reads "a.com, b.org" or one per line.
func parseHosts(text string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == '\n' || r == ' ' }) {
		out = append(out, strings.TrimSpace(f))
	}
	return out
}

func (x *secretsSection) render() {
	x.box.RemoveAll()
	about := widget.NewLabel("API keys sandboxes never see. A sandbox with network \"egress\" gets a placeholder in the variable of the same name; " +
		"Sandtray's egress gate puts the real value into requests to the bound hosts only, and refuses the placeholder anywhere else. " +
		"Values are kept in " + x.store.SecretsWhere() + ". Changes apply to sandboxes created after a restart.")
	about.Wrapping = fyne.TextWrapWord
	x.box.Add(about)
	list, err := x.store.Secrets()
	if err != nil {
		x.show("Secrets cannot be read: "+err.Error(), true)
	}
	form := widget.NewForm()
	for _, sec := range list {
		hosts := widget.NewEntry()
		hosts.Wrapping, hosts.Scroll = fyne.TextWrapOff, container.ScrollNone
		hosts.SetText(strings.Join(sec.Hosts, ", "))
		name := sec.Name
		bind := widget.NewButtonWithIcon("Bind", theme.ConfirmIcon(), func() { x.bind(name, hosts.Text) })
		remove := widget.NewButtonWithIcon("", theme.DeleteIcon(), func() { x.remove(name) })
		value := "value: ••••••••  (" + sec.Source + ")"
		if !sec.HasValue {
			value = "no value stored (" + sec.Source + ")"
		}
		item := widget.NewFormItem(name, container.NewBorder(nil, nil, nil, container.NewHBox(bind, remove), hosts))
		item.HintText = value
		form.AppendItem(item)
	}
	if len(list) == 0 {
		none := widget.NewLabel("None yet.")
		none.Importance = widget.LowImportance
		x.box.Add(none)
	} else {
		x.box.Add(form)
	}
	x.name = widget.NewEntry()
	x.name.SetPlaceHolder("e.g. ANTHROPIC_API_KEY")
	x.value = widget.NewPasswordEntry()
	x.value.SetPlaceHolder("the key; masked, and never shown again")
	x.hosts = widget.NewEntry()
	x.hosts.SetPlaceHolder("api.openai.com, *.example.com, host:8443")
	for _, e := range []*widget.Entry{x.name, x.value, x.hosts} {
		e.Wrapping, e.Scroll = fyne.TextWrapOff, container.ScrollNone
	}
	add := widget.NewButtonWithIcon("Add secret", theme.ContentAddIcon(), x.add)
	addForm := widget.NewForm(
		widget.NewFormItem("Name", x.name),
		widget.NewFormItem("Value", x.value),
		widget.NewFormItem("Hosts", x.hosts),
	)
	x.box.Add(widget.NewLabelWithStyle("Add a secret", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))
	x.box.Add(addForm)
	x.box.Add(container.NewHBox(layout.NewSpacer(), add))
	x.box.Add(x.msg)
	x.box.Refresh()
}

func (x *secretsSection) show(text string, isError bool) {
	x.msg.Importance = widget.SuccessImportance
	if isError {
		x.msg.Importance = widget.DangerImportance
	}
	x.msg.SetText(text)
	x.msg.Show()
}

// run does f off the UI thread, then shows ok or the error and redraws.
func (x *secretsSection) run(f func() error, ok string) {
	x.s.u.background(func(context.Context) error { return f() }, func(err error) {
		if err != nil {
			x.show("Not changed: "+err.Error(), true)
			return
		}
		x.render()
		x.show(ok, false)
	})
}

func (x *secretsSection) add() {
	name, value, hosts := strings.TrimSpace(x.name.Text), x.value.Text, parseHosts(x.hosts.Text)
	// The value leaves the entry at once: nothing shows it again.
	x.value.SetText("")
	if name == "" || len(hosts) == 0 {
		x.show("Not added: give a name, the value and at least one host.", true)
		return
	}
	x.run(func() error { return x.store.AddSecret(name, value, hosts) },
		fmt.Sprintf("Added %s for %s. Sandboxes created after a restart get it.", name, strings.Join(hosts, ", ")))
}

func (x *secretsSection) bind(name, text string) {
	hosts := parseHosts(text)
	if len(hosts) == 0 {
		x.show("Not changed: a secret needs at least one host; remove it instead.", true)
		return
	}
	x.run(func() error { return x.store.BindSecret(name, hosts) },
		fmt.Sprintf("%s is bound to %s (after a restart).", name, strings.Join(hosts, ", ")))
}

func (x *secretsSection) remove(name string) {
	dialog.ShowConfirm("Remove "+name+"?", "Its value is deleted from where Sandtray keeps it, and sandboxes created after a restart no longer get it.",
		func(ok bool) {
			if ok {
				x.run(func() error { return x.store.RemoveSecret(name) }, "Removed "+name+".")
			}
		}, x.s.win)
}
