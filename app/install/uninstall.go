package install

import (
	"fmt"
	"strings"

	"github.com/sandtray/sandtray/internal/atomicfile"
)

// Uninstall removes Sandtray's entry from client's MCP config and nothing
// else, with the same backup and atomic write as Install. A config without
// the entry, or no config at all, is left alone (Status Absent).
func Uninstall(client string, opts Options) (Result, error) {
	c, ok := clientByName(client)
	if !ok {
		return Result{}, fmt.Errorf("%w %q: choose one of %s", ErrUnknownClient, client,
			strings.Join(Clients(), ", "))
	}
	opts, err := withHome(opts)
	if err != nil {
		return Result{}, err
	}
	path, err := c.configPath(opts)
	if err != nil {
		return Result{}, err
	}
	res := Result{Client: c.name, App: c.app, Path: path, Status: Absent}
	file, err := readConfig(path)
	if err != nil || !file.exists {
		return res, err
	}
	root, err := parseConfig(path, file.data)
	if err != nil {
		return res, err
	}
	servers, err := serverMap(path, root, c.key)
	if err != nil {
		return res, err
	}
	if _, had := servers.get(ServerName); !had {
		return res, nil
	}
	out, err := encode(root.set(c.key, mustMarshal(servers.without(ServerName))), "  ")
	if err != nil {
		return res, fmt.Errorf("%s: %w", path, err)
	}
	res.Status, res.Backup = Removed, file.path+".bak"
	if err := atomicfile.Write(res.Backup, file.data, file.mode); err != nil {
		return res, fmt.Errorf("back up %s: %w", file.path, err)
	}
	if err := atomicfile.Write(file.path, out, file.mode); err != nil {
		return res, fmt.Errorf("write %s: %w", file.path, err)
	}
	return res, nil
}
