package install

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sandtray/sandtray/internal/atomicfile"
)

// newFileMode is the mode of a config file Install creates: client configs
// can hold other servers' secrets, so only the user may read them.
const newFileMode fs.FileMode = 0o600

// configFile is a config file as found on disk.
type configFile struct {
	path   string      // the real file, after symlinks
	data   []byte      // its content; nil when it does not exist
	mode   fs.FileMode // its permission bits, or newFileMode
	exists bool
	linked bool // the config's own name is a symbolic link (to path)
}

// apply merges entry into the client's config file and writes it back with a
// backup, unless nothing would change. Members named in stale (the other
// form's) are dropped from an existing entry. A file that will hold a
// secret (the HTTP token) is made readable by its owner only, backup too.
func apply(res Result, c client, entry object, stale []string, secret bool) (Result, error) {
	file, err := readConfig(res.Path)
	if err != nil {
		return res, err
	}
	if secret {
		file.mode &^= 0o077
	}
	root, err := parseConfig(res.Path, file.data)
	if err != nil {
		return res, err
	}
	servers, err := serverMap(res.Path, root, c.key)
	if err != nil {
		return res, err
	}
	existing, had := servers.get(ServerName)
	merged, changed := mergeEntry(existing, entry)
	if kept := merged.without(stale...); len(kept) != len(merged) {
		merged, changed = kept, true
	}
	if !changed {
		res.Status = Unchanged
		return res, nil
	}
	servers = servers.set(ServerName, mustMarshal(merged))
	out, err := encode(root.set(c.key, mustMarshal(servers)), "  ")
	if err != nil {
		return res, fmt.Errorf("%s: %w", res.Path, err)
	}
	res.Status = statusFor(file.exists, had)
	if file.exists {
		res.Backup = file.path + ".bak"
		if err := atomicfile.Write(res.Backup, file.data, file.mode); err != nil {
			return res, fmt.Errorf("back up %s: %w", file.path, err)
		}
	}
	if err := atomicfile.Write(file.path, out, file.mode); err != nil {
		return res, fmt.Errorf("write %s: %w", file.path, err)
	}
	if secret && file.linked {
		res.Target = file.path
	}
	return res, nil
}

// statusFor names the change: a new file, a new entry or a changed one.
func statusFor(fileExisted, entryExisted bool) Status {
	switch {
	case !fileExisted:
		return Created
	case entryExisted:
		return Updated
	}
	return Added
}

// readConfig reads the config at path. A symlinked config (dotfile managers
// do this) is read and later written through the link, so the link survives.
func readConfig(path string) (configFile, error) {
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		return configFile{path: path, mode: newFileMode}, nil
	}
	if err != nil {
		return configFile{}, fmt.Errorf("read %s: %w", path, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return configFile{}, fmt.Errorf("read %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return configFile{}, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := os.ReadFile(real)
	if err != nil {
		return configFile{}, fmt.Errorf("read %s: %w", path, err)
	}
	return configFile{path: real, data: data, mode: fi.Mode().Perm(), exists: true, linked: isLink(path)}, nil
}

// isLink reports whether path's last element is a symbolic link. Links
// among its folders (a home on /usr/home) do not count: the file there is
// the one its name says.
func isLink(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}
