//go:build cgo

package host

import (
	"context"
	"time"

	"github.com/sandtray/sandtray/app/autostart"
	"github.com/sandtray/sandtray/app/install"
	"github.com/sandtray/sandtray/app/settings"
	"github.com/sandtray/sandtray/app/terminal"
	"github.com/sandtray/sandtray/ui"
)

// withDesktop adds the desktop features to the UI's options: the Clients
// window (app/install), Settings (app/settings on configPath), Start at
// login (app/autostart) and the Terminal button (app/terminal).
// apply applies a saved change to the running engine (nil: it waits for
// a restart).
func withDesktop(o ui.Options, configPath string, apply func(context.Context) ([]string, error)) ui.Options {
	o.Clients = uiClients{}
	o.Settings = uiSettings{s: settings.New(configPath), apply: apply}
	if a, err := autostart.New(); err == nil {
		o.Autostart = uiAutostart{a}
	}
	o.Terminal = terminal.New()
	o.Diagnose = uiDiagnoser{configPath}
	return o
}

// uiClients adapts app/install to the Clients window.
type uiClients struct {
	opts install.Options // zero: the user's home, sandtray-mcp next to this binary
}

func (c uiClients) List() []ui.ClientState {
	var out []ui.ClientState
	for _, s := range install.Inspect(c.opts) {
		st := ui.ClientState{Name: s.Client, App: s.App, Path: s.Path, Installed: s.Installed,
			Connected: s.Connected, Current: s.Current}
		if s.Err != nil {
			st.Problem = s.Err.Error()
		}
		out = append(out, st)
	}
	return out
}

func (c uiClients) Connect(name string) (string, error) {
	res, err := install.Install(name, c.opts)
	return res.String(), err
}

func (c uiClients) Disconnect(name string) (string, error) {
	res, err := install.Uninstall(name, c.opts)
	return res.String(), err
}

// uiSettings adapts app/settings to the Settings window, and has the
// running engine apply what was saved.
type uiSettings struct {
	s     *settings.Store
	apply func(context.Context) (restart []string, err error)
}

// applyTimeout bounds applying saved settings (the pool's old spares are
// removed in the background).
const applyTimeout = 30 * time.Second

func (u uiSettings) Path() string { return u.s.Path() }

// Problem says what is wrong with a config file the engine refuses.
func (u uiSettings) Problem() (ui.ConfigProblem, bool) {
	d, bad := settings.Diagnose(u.s.Path())
	return ui.ConfigProblem{Path: d.Path, Line: d.Line, Key: d.Key, Suggest: d.Suggest, Text: d.Text}, bad
}

func (u uiSettings) Fields() ([]ui.SettingField, error) {
	fields, err := u.s.Fields()
	out := make([]ui.SettingField, len(fields))
	for i, f := range fields {
		out[i] = ui.SettingField{Key: f.Key, Label: f.Label, Group: f.Group, Kind: ui.SettingKind(f.Kind),
			Value: f.Value, List: f.List, Choices: f.Choices, Help: f.Help, Restart: f.Applies == settings.Restart}
	}
	return out, err
}

func (u uiSettings) Save(fields []ui.SettingField) (ui.SettingsSaved, error) {
	edited := make([]settings.Field, len(fields))
	for i, f := range fields {
		edited[i] = settings.Field{Key: f.Key, Value: f.Value, List: f.List}
	}
	saved, err := u.s.Save(edited)
	out := ui.SettingsSaved{Changed: saved.Changed, Rewritten: saved.Rewritten, Backup: saved.Backup}
	if err != nil || len(saved.Changed) == 0 || u.apply == nil {
		return out, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), applyTimeout)
	defer cancel()
	restart, aerr := u.apply(ctx)
	if aerr != nil {
		out.NotApplied = aerr.Error()
		return out, nil
	}
	out.Applied, out.Restart = true, restart
	return out, nil
}

// uiAutostart adapts app/autostart to the tray's Start at login.
type uiAutostart struct{ a *autostart.Autostart }

func (u uiAutostart) Enabled() (bool, error) {
	st, err := u.a.Status()
	return st.Enabled, err
}

func (u uiAutostart) SetEnabled(on bool) error {
	if !on {
		_, err := u.a.Disable()
		return err
	}
	exe, err := autostart.Executable()
	if err == nil {
		_, err = u.a.Enable(exe)
	}
	return err
}

// The Secrets section of the Settings window (ui.SecretSettings).

func (u uiSettings) Secrets() ([]ui.SecretEntry, error) {
	list, err := u.s.Secrets()
	out := make([]ui.SecretEntry, len(list))
	for i, s := range list {
		out[i] = ui.SecretEntry{Name: s.Name, Hosts: s.Hosts, Source: s.Source, HasValue: s.HasValue}
	}
	return out, err
}

func (u uiSettings) AddSecret(name, value string, hosts []string) error {
	return u.s.AddSecret(name, value, hosts)
}
func (u uiSettings) BindSecret(name string, hosts []string) error { return u.s.BindSecret(name, hosts) }
func (u uiSettings) RemoveSecret(name string) error               { return u.s.RemoveSecret(name) }
func (u uiSettings) SecretsWhere() string                         { return u.s.SecretsWhere() }
