package install

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
}

// apply merges entry into the client's config file and writes it back with a
// backup, unless nothing would change.
func apply(res Result, c client, entry object) (Result, error) {
	file, err := readConfig(res.Path)
	if err != nil {
		return res, err
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
		if err := writeAtomic(res.Backup, file.data, file.mode); err != nil {
			return res, fmt.Errorf("back up %s: %w", file.path, err)
		}
	}
	if err := writeAtomic(file.path, out, file.mode); err != nil {
		return res, fmt.Errorf("write %s: %w", file.path, err)
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
	return configFile{path: real, data: data, mode: fi.Mode().Perm(), exists: true}, nil
}

// writeAtomic replaces path with data via a temporary file in the same
// directory and a rename, so a crash leaves the old file or the new one,
// never half of one. The directory is created (0700) when missing.
func writeAtomic(path string, data []byte, mode fs.FileMode) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
