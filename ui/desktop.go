package ui

// What the desktop features need from outside the UI: the MCP clients to
// connect, starting at login, the settings file and a terminal emulator.
// Each is optional; the UI hides a feature whose Options field is nil.

// ClientState is one MCP client as the Clients window shows it.
type ClientState struct {
	Name      string // what `sandtray install` takes, e.g. "claude-code"
	App       string // e.g. "Claude Code"
	Path      string // its MCP config file
	Installed bool   // its own folder exists on this machine
	Connected bool   // Sandtray is in its config
	Current   bool   // and runs this Sandtray's sandtray-mcp
	Problem   string // why its config cannot be read or written, if so
}

// Clients connects MCP clients to Sandtray (the host adapts app/install,
// the code of `sandtray install`).
type Clients interface {
	List() []ClientState
	Connect(name string) (message string, err error)
	Disconnect(name string) (message string, err error)
}

// Autostart turns starting Sandtray at login on and off.
type Autostart interface {
	Enabled() (bool, error)
	SetEnabled(on bool) error
}

// SettingKind is how a setting is typed.
type SettingKind int

// The kinds of setting, as app/settings has them.
const (
	SettingText SettingKind = iota
	SettingInt
	SettingNumber
	SettingDuration
	SettingBool
	SettingChoice
	SettingFolders
)

// SettingField is one setting in the Settings window.
type SettingField struct {
	Key     string // the config.toml key, e.g. "limits.memory_mb"
	Label   string
	Group   string
	Kind    SettingKind
	Value   string   // as text (every kind but SettingFolders)
	List    []string // SettingFolders
	Choices []string // SettingChoice
	Help    string
	Restart bool // takes effect when Sandtray restarts; the others apply at once
}

// SettingsSaved says what a save changed.
type SettingsSaved struct {
	Changed   []string // keys
	Rewritten bool     // written whole: comments are only in Backup
	Backup    string
	// Applied says the running engine took the change: every changed key
	// applies now but those in Restart. Without it, every change waits
	// for a restart.
	Applied bool
	Restart []string // changed keys that wait for a restart (with Applied)
	// NotApplied says why a saved change could not be applied now (it
	// then waits for a restart).
	NotApplied string
}

// waiting are the changed keys that wait for a restart.
func (s SettingsSaved) waiting() []string {
	if s.Applied {
		return s.Restart
	}
	return s.Changed
}

// Settings reads and writes config.toml, validating with the config
// loader's own checks.
type Settings interface {
	Path() string
	Fields() ([]SettingField, error)
	Save(fields []SettingField) (SettingsSaved, error)
}

// ConfigProblems is what Settings may also do: say what is wrong with a
// config file it cannot read, for the window to show its line.
type ConfigProblems interface {
	Problem() (ConfigProblem, bool)
}

// Terminal opens the user's terminal emulator running argv.
type Terminal interface {
	Open(argv []string) error
}
