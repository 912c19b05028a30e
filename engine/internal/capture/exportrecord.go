package capture

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// exportNames are the files an export writes; a folder holding anything
// else is not (only) Sandtray's export.
var exportNames = []string{".dockerignore", "Dockerfile", archiveName}

// exportRecord is what an export wrote into one folder: each file's
// SHA-256 (Dockerfile, .dockerignore) or size and modification time
// (rootfs.tar, too large to hash at every export). It is kept in the
// engine's state dir, where no sandbox can write, so a folder is written
// again only when it still holds exactly what Sandtray left there: a
// Dockerfile a sandbox put there with Sandtray's first line, or one the user
// edited, does not match.
type exportRecord map[string]string

// recordOf describes the export files in root as they are now.
func recordOf(root *os.Root) (exportRecord, error) {
	rec := exportRecord{}
	for _, name := range exportNames {
		st, err := root.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !st.Mode().IsRegular() {
			rec[name] = "not a file"
			continue
		}
		if name == archiveName {
			rec[name] = fmt.Sprintf("size %d, modified %d", st.Size(), st.ModTime().UnixNano())
			continue
		}
		f, err := root.Open(name)
		if err != nil {
			return nil, err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return nil, err
		}
		rec[name] = hex.EncodeToString(h.Sum(nil))
	}
	return rec, nil
}

// recordPath is where the record of the export folder dir is kept.
func (c *Capture) recordPath(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return filepath.Join(c.cfg.ExportRecords, hex.EncodeToString(sum[:16])+".json")
}

// isOwnExport reports whether root holds only export files and they are
// exactly those the last export to dir wrote.
func (c *Capture) isOwnExport(root *os.Root, dir string) bool {
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil || c.cfg.ExportRecords == "" {
		return false
	}
	for _, e := range entries {
		if !slices.Contains(exportNames, e.Name()) {
			return false
		}
	}
	raw, err := os.ReadFile(c.recordPath(dir))
	if err != nil {
		return false
	}
	var want exportRecord
	if json.Unmarshal(raw, &want) != nil {
		return false
	}
	got, err := recordOf(root)
	if err != nil || len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// remember records what the export to dir left in root.
func (c *Capture) remember(root *os.Root, dir string) error {
	if c.cfg.ExportRecords == "" {
		return nil
	}
	rec, err := recordOf(root)
	if err != nil {
		return err
	}
	raw, _ := json.Marshal(rec)
	if err := os.MkdirAll(c.cfg.ExportRecords, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(c.cfg.ExportRecords, ".record-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(raw)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), c.recordPath(dir))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
