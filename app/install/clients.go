package install

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// client describes where an MCP client keeps its servers and how it spells
// an entry.
type client struct {
	name     string // what the user types: sandtray install <name>
	app      string // what the user calls it
	key      string // top-level key holding the server map
	withType bool   // the entry carries "type": "stdio"
	path     func(goos, home, configHome string) (string, error)
}

// clients is every client Install knows, by name.
var clients = []client{
	{name: "claude", app: "Claude Desktop", key: "mcpServers", path: claudeDesktopPath},
	{name: "claude-code", app: "Claude Code", key: "mcpServers", withType: true, path: inHome(".claude.json")},
	{name: "cursor", app: "Cursor", key: "mcpServers", path: inHome(".cursor", "mcp.json")},
	{name: "vscode", app: "VS Code", key: "servers", withType: true, path: vscodePath},
}

// Clients returns the names Install accepts, sorted.
func Clients() []string {
	names := make([]string, len(clients))
	for i, c := range clients {
		names[i] = c.name
	}
	slices.Sort(names)
	return names
}

// clientByName finds a client by the name the user typed.
func clientByName(name string) (client, bool) {
	i := slices.IndexFunc(clients, func(c client) bool { return c.name == name })
	if i < 0 {
		return client{}, false
	}
	return clients[i], true
}

// configPath is the client's config file for opts' OS and home.
func (c client) configPath(opts Options) (string, error) {
	return c.path(opts.GOOS, opts.Home, configHome(opts))
}

// entry is Sandtray's server entry for this client, keys in the order the
// client's own tools write them.
func (c client) entry(shimPath string) object {
	var e object
	if c.withType {
		e = append(e, member{Key: "type", Value: mustJSON("stdio")})
	}
	return append(e,
		member{Key: "command", Value: mustJSON(shimPath)},
		member{Key: "args", Value: json.RawMessage("[]")})
}

// configHome is the XDG config dir on Linux: $XDG_CONFIG_HOME when set and
// Home came from the system, else ~/.config.
func configHome(opts Options) string {
	if d := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) && opts.systemHome {
		return d
	}
	return filepath.Join(opts.Home, ".config")
}

// inHome is a path under the home directory, the same on every OS.
func inHome(elem ...string) func(goos, home, configHome string) (string, error) {
	return func(_, home, _ string) (string, error) {
		return filepath.Join(append([]string{home}, elem...)...), nil
	}
}

// claudeDesktopPath is Claude Desktop's claude_desktop_config.json.
func claudeDesktopPath(goos, home, configHome string) (string, error) {
	switch goos {
	case "darwin":
		return filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json"), nil
	case "linux":
		return filepath.Join(configHome, "Claude", "claude_desktop_config.json"), nil
	case "windows": // %APPDATA%
		return filepath.Join(home, "AppData", "Roaming", "Claude", "claude_desktop_config.json"), nil
	}
	return "", unsupportedOS("claude", goos)
}

// vscodePath is VS Code's user-level mcp.json.
func vscodePath(goos, home, configHome string) (string, error) {
	switch goos {
	case "darwin":
		return filepath.Join(home, "Library", "Application Support", "Code", "User", "mcp.json"), nil
	case "linux":
		return filepath.Join(configHome, "Code", "User", "mcp.json"), nil
	case "windows": // %APPDATA%
		return filepath.Join(home, "AppData", "Roaming", "Code", "User", "mcp.json"), nil
	}
	return "", unsupportedOS("vscode", goos)
}

// unsupportedOS says a client's config location is unknown on goos.
func unsupportedOS(name, goos string) error {
	return fmt.Errorf("sandtray install %s: no known config location on %s; use --print and add the entry by hand",
		name, goos)
}

// mustJSON encodes a string, which cannot fail.
func mustJSON(s string) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return b
}
