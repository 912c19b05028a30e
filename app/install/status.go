package install

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// State is one client as the Clients view shows it.
type State struct {
	Client    string // the name Install takes, e.g. "claude-code"
	App       string // e.g. "Claude Code"
	Path      string // its MCP config file ("" when the OS has none known)
	Installed bool   // the client's own folder exists on this machine
	Connected bool   // the config has Sandtray's entry
	Command   string // the entry's command, when connected through the shim
	URL       string // the entry's URL, when connected over HTTP (install --http)
	Current   bool   // the entry runs the sandtray-mcp Install would write, or is an HTTP entry
	Err       error  // the config could not be read, or the OS is unsupported
}

// Inspect reports every client Install knows, in Clients order. It never
// writes; a client whose config is unreadable has Err set and the others
// are still reported.
func Inspect(opts Options) []State {
	opts, err := withHome(opts)
	shim := opts.ShimPath
	if shim == "" {
		shim, _ = DefaultShimPath()
	}
	states := make([]State, 0, len(clients))
	for _, name := range Clients() {
		c, _ := clientByName(name)
		st := State{Client: c.name, App: c.app, Err: err}
		if err == nil {
			st = inspect(c, opts, shim)
		}
		states = append(states, st)
	}
	return states
}

func inspect(c client, opts Options, shim string) State {
	st := State{Client: c.name, App: c.app}
	path, err := c.configPath(opts)
	if err != nil {
		st.Err = err
		return st
	}
	st.Path = path
	st.Installed = exists(c.folder(path, opts))
	file, err := readConfig(path)
	if err != nil || !file.exists {
		st.Err = err
		return st
	}
	root, err := parseConfig(path, file.data)
	if err != nil {
		st.Err = err
		return st
	}
	servers, err := serverMap(path, root, c.key)
	if err != nil {
		st.Err = err
		return st
	}
	raw, ok := servers.get(ServerName)
	if !ok {
		return st
	}
	st.Connected = true
	if entry, err := parseObject(raw); err == nil {
		if cmd, ok := entry.get("command"); ok {
			_ = json.Unmarshal(cmd, &st.Command)
		}
		if url, ok := entry.get("url"); ok {
			_ = json.Unmarshal(url, &st.URL)
		}
	}
	st.Current = st.URL != "" || shim != "" && st.Command == shim
	return st
}

// folder is the directory whose presence says the client is installed.
func (c client) folder(configPath string, opts Options) string {
	switch c.name {
	case "claude-code":
		return filepath.Join(opts.Home, ".claude")
	case "vscode":
		return filepath.Dir(filepath.Dir(configPath)) // …/Code, not …/Code/User
	}
	return filepath.Dir(configPath)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
