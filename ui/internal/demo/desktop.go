package main

import (
	"slices"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/ui"
)

// demoClients is four clients in the states a screenshot should show.
type demoClients struct{ states []ui.ClientState }

func newDemoClients() *demoClients {
	home := "/home/me"
	return &demoClients{states: []ui.ClientState{
		{Name: "claude", App: "Claude Desktop", Path: home + "/.config/Claude/claude_desktop_config.json", Installed: true},
		{Name: "claude-code", App: "Claude Code", Path: home + "/.claude.json", Installed: true, Connected: true, Current: true},
		{Name: "cursor", App: "Cursor", Path: home + "/.cursor/mcp.json"},
		{Name: "vscode", App: "VS Code", Path: home + "/.config/Code/User/mcp.json", Installed: true},
	}}
}

func (d *demoClients) List() []ui.ClientState { return d.states }

func (d *demoClients) set(name string, on bool) {
	for i := range d.states {
		if d.states[i].Name == name {
			d.states[i].Connected, d.states[i].Current, d.states[i].Installed = on, on, true
		}
	}
}

func (d *demoClients) Connect(name string) (string, error) {
	d.set(name, true)
	return "Added sandtray to the config (backup kept). Restart the assistant to load it.", nil
}

func (d *demoClients) Disconnect(name string) (string, error) {
	d.set(name, false)
	return "Removed sandtray from the config (backup kept).", nil
}

// demoSettings holds the Settings window's fields in memory, as the real
// store (app/settings, which reaches the Docker SDK through the engine, so
// the UI's packages may not import it) would show a commented config.
type demoSettings struct{ fields []ui.SettingField }

func newDemoSettings() *demoSettings {
	sb := func(key, label string, kind ui.SettingKind, value, help string) ui.SettingField {
		return ui.SettingField{Key: key, Label: label, Group: "Sandboxes", Kind: kind, Value: value, Help: help}
	}
	return &demoSettings{fields: []ui.SettingField{
		sb("default_image", "Default image", ui.SettingText, "sandtray/sandbox:latest", "The image a sandbox uses when the assistant names none."),
		sb("limits.memory_mb", "Memory (MB)", ui.SettingInt, "2048", "Memory of a new sandbox unless the assistant asks for more."),
		sb("limits.max_memory_mb", "Most memory (MB)", ui.SettingInt, "8192", "The most memory an assistant may ask for."),
		sb("limits.cpus", "CPUs", ui.SettingNumber, "1", "CPU cores of a new sandbox, e.g. 1 or 0.5."),
		sb("limits.max_cpus", "Most CPUs", ui.SettingNumber, "2", "The most cores an assistant may ask for."),
		sb("limits.exec_timeout", "Command timeout", ui.SettingDuration, "30s", `A command's time limit unless the assistant asks for longer, e.g. "30s", "2m".`),
		sb("limits.disk_mb", "Disk (MB)", ui.SettingInt, "10240", "Files a sandbox may add to its image; 0 means no limit."),
		{Key: "sandbox.profile", Label: "Security profile", Group: "Sandboxes", Kind: ui.SettingChoice, Value: "standard",
			Choices: []string{"standard", "strict"}, Help: `"strict": read-only root, size-limited workdir and /tmp, a non-root user.`},
		{Key: "sandbox.network", Label: "Network", Group: "Network", Kind: ui.SettingChoice, Value: "none",
			Choices: []string{"none", "bridge"}, Help: `"none": off unless a sandbox asks; "bridge": Sandtray's network for all.`},
		{Key: "sandbox.allow_network", Label: "Assistants may ask for a network", Group: "Network", Kind: ui.SettingBool, Value: "true",
			Help: `When off, a request for network "bridge" is refused.`},
		{Key: "host.allowed_roots", Label: "Host folders", Group: "Host folders", Kind: ui.SettingFolders, Restart: true,
			List: []string{"/home/me/Sandtray", "/home/me/src/data"}, Help: "Assistants may copy files to and from these folders only."},
		{Key: "pool.size", Label: "Warm sandboxes per image", Group: "Warm pool", Kind: ui.SettingInt, Value: "2", Restart: true,
			Help: "Sandboxes kept started so a new one answers at once; 0: no pool."},
		{Key: "http.listen", Label: "HTTP endpoint", Group: "HTTP endpoint", Kind: ui.SettingText, Restart: true,
			Help: "MCP over HTTP at host:port, e.g. 127.0.0.1:8765 (token: sandtray token); empty: off."},
	}}
}

func (d *demoSettings) Path() string { return "/home/me/.config/sandtray/config.toml" }

func (d *demoSettings) Fields() ([]ui.SettingField, error) { return slices.Clone(d.fields), nil }

func (d *demoSettings) Save(fields []ui.SettingField) (ui.SettingsSaved, error) {
	var saved ui.SettingsSaved
	for i, f := range fields {
		if f.Value != d.fields[i].Value || !slices.Equal(f.List, d.fields[i].List) {
			saved.Changed = append(saved.Changed, f.Key)
		}
	}
	d.fields = slices.Clone(fields)
	return saved, nil
}

// demoAutostart is an in-memory login item, on.
type demoAutostart struct{ on bool }

func (d *demoAutostart) Enabled() (bool, error)   { return d.on, nil }
func (d *demoAutostart) SetEnabled(on bool) error { d.on = on; return nil }

// showTrayMenu shows the tray's menu drawn by Fyne in a window of its own,
// for a screenshot: Xvfb has no system tray to open it in.
func showTrayMenu(a fyne.App, u *ui.UI) {
	w := a.NewWindow("Sandtray tray menu")
	w.SetContent(container.NewPadded(widget.NewMenu(u.TrayMenu())))
	w.Resize(fyne.NewSize(300, 10))
	w.Show()
	go func() { // draw it again once the first snapshots have set the count
		time.Sleep(2 * time.Second)
		fyne.Do(func() { w.SetContent(container.NewPadded(widget.NewMenu(u.TrayMenu()))) })
	}()
}
