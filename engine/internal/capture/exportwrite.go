package capture

import (
	"archive/tar"
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/sandtray/sandtray/engine/internal/hostfs"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// writeExport writes Dockerfile, .dockerignore and rootfs.tar into root. All
// three are written through an os.Root as new temporary files renamed into
// place, so nothing is written through a symlink and a failed export leaves
// an earlier one whole. The Dockerfile goes last: a folder with Sandtray's
// Dockerfile holds a complete export.
func (c *Capture) writeExport(ctx context.Context, t Target, p *exportPlan, root *os.Root, dir string) (sandbox.Export, error) {
	ex := sandbox.Export{Dir: dir, Files: []string{}}
	entries, err := 0, error(nil)
	if len(p.roots) > 0 {
		err = writeRootFile(root, archiveName, func(w io.Writer) error {
			entries, err = c.writeArchive(ctx, t, p, w, c.archiveBudget(dir))
			return err
		})
		if err != nil {
			return ex, fmt.Errorf("write %s in %s: %w", archiveName, dir, err)
		}
	}
	if entries == 0 {
		// An empty tar is not unpacked by ADD but copied as a file: leave it out.
		if err := root.Remove(archiveName); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return ex, fmt.Errorf("remove the old %s in %s: %w", archiveName, dir, err)
		}
	} else {
		ex.Files = []string{archiveName}
	}
	ex.Dockerfile = p.dockerfile(entries > 0)
	for _, f := range []struct{ name, text string }{{".dockerignore", dockerignore}, {"Dockerfile", ex.Dockerfile}} {
		err := writeRootFile(root, f.name, func(w io.Writer) error { _, err := io.WriteString(w, f.text); return err })
		if err != nil {
			return ex, fmt.Errorf("write %s in %s: %w", f.name, dir, err)
		}
	}
	if err := c.remember(root, dir); err != nil {
		return ex, fmt.Errorf("record the export to %s: %w", dir, err)
	}
	return ex, nil
}

// openExportDir creates dir (its parent must exist) or accepts it when it is
// empty or holds exactly Sandtray's own earlier export to it (see
// exportRecord), and opens it as an os.Root.
func (c *Capture) openExportDir(dir string) (*os.Root, error) {
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("folder %s does not exist; create it first: %w", path.Dir(dir), sandbox.ErrNotFound)
		}
		return nil, fmt.Errorf("create export folder %s: %w", dir, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("export folder %s is not a folder Sandtray can open (%v): %w", dir, err, sandbox.ErrConflict)
	}
	entries, err := fs.ReadDir(root.FS(), ".")
	if err == nil && len(entries) > 0 && !c.isOwnExport(root, dir) {
		root.Close()
		return nil, fmt.Errorf("folder %s holds files that are not exactly Sandtray's own earlier export to it (other files, or files changed since), and Sandtray never overwrites them; pick a new or empty folder: %w", dir, sandbox.ErrConflict)
	}
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("read export folder %s: %w", dir, err)
	}
	return root, nil
}

// writeRootFile writes name in root through a new temporary file (O_EXCL, so
// never an existing file or link) renamed over it.
func writeRootFile(root *os.Root, name string, fill func(io.Writer) error) error {
	tmp := "." + name + ".sandtray-" + sandbox.RandomHex(4)
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 256<<10)
	err = fill(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		root.Remove(tmp)
	}
	return err
}

// writeArchive streams each root out of the sandbox into one tar whose names
// are relative to "/", leaving out what the filter skips, and returns how
// many entries it wrote.
func (c *Capture) writeArchive(ctx context.Context, t Target, p *exportPlan, w io.Writer, take func(size int64) error) (int, error) {
	tw := tar.NewWriter(w)
	written := map[string]bool{}
	for _, r := range p.roots {
		rc, _, err := c.docker.CopyFrom(ctx, t.ID(), r)
		if errors.Is(err, sandbox.ErrNotFound) {
			continue // removed since the diff
		}
		if err != nil {
			return 0, t.Gone(fmt.Errorf("read %s from sandbox %s: %w", r, t.Name(), err))
		}
		err = copyEntries(tw, tar.NewReader(rc), r, &p.filter, written, take)
		rc.Close()
		if err != nil {
			return 0, fmt.Errorf("archive %s: %w", r, err)
		}
	}
	return len(written), tw.Close()
}

// archiveBudget charges each entry of an export's archive against the copy
// limits and checks that the host keeps its free space in dir: an export
// moves a sandbox's files to the host like copy_from_sandbox.
func (c *Capture) archiveBudget(dir string) func(size int64) error {
	b := hostfs.Budget{Limits: c.cfg.CopyLimits}
	return func(size int64) error {
		if err := b.Take(size); err != nil {
			return err
		}
		if size > 0 {
			return hostfs.CheckFree(dir, size)
		}
		return nil
	}
}

// copyEntries copies Docker's archive of the sandbox path r (names relative
// to r's parent) into tw. Devices, FIFOs and hard links to files left out
// are dropped: an export holds files, folders and symlinks.
func copyEntries(tw *tar.Writer, tr *tar.Reader, r string, f *exportFilter, written map[string]bool, take func(size int64) error) error {
	parent := path.Dir(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		abs := path.Join(parent, hdr.Name)
		if (abs != r && !strings.HasPrefix(abs, r+"/")) || f.skipsEntry(abs, hdr) {
			continue
		}
		hdr.Name = strings.TrimPrefix(abs, "/")
		switch hdr.Typeflag {
		case tar.TypeDir:
			hdr.Name += "/"
		case tar.TypeReg, tar.TypeSymlink:
		case tar.TypeLink:
			hdr.Linkname = strings.TrimPrefix(path.Join(parent, hdr.Linkname), "/")
			if !written[hdr.Linkname] {
				continue
			}
		default:
			continue
		}
		if err := take(hdr.Size); err != nil {
			return err
		}
		cleanHeader(hdr)
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if hdr.Typeflag == tar.TypeReg {
			if _, err := io.Copy(tw, tr); err != nil {
				return err
			}
		}
		written[strings.TrimSuffix(hdr.Name, "/")] = true
	}
}

// cleanHeader lets the writer pick a format for the new name and keeps only
// extended attributes among the PAX records (the rest describe fields the
// header carries itself).
func cleanHeader(hdr *tar.Header) {
	hdr.Format = tar.FormatUnknown
	for k := range hdr.PAXRecords {
		if !strings.HasPrefix(k, "SCHILY.xattr.") {
			delete(hdr.PAXRecords, k)
		}
	}
}
