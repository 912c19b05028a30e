package hostfs

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// CheckTree counts the host tree src against lim (a walk of its names and
// sizes, reading no file), so an oversized copy is refused before a byte of
// it goes anywhere.
func CheckTree(src string, lim Limits) error {
	root, err := os.OpenRoot(filepath.Dir(src))
	if err != nil {
		return err
	}
	defer root.Close()
	count := Budget{Limits: lim}
	return fs.WalkDir(root.FS(), filepath.Base(src), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			return count.Take(info.Size())
		}
		return count.Take(0)
	})
}

// TarTree writes src as a tar stream whose top entry is named name and
// whose entries are owned by uid and gid (the host's owners mean nothing in
// the sandbox). It reads through an os.Root at src's folder, so a link
// swapped in during the copy cannot lead it outside, and stops at lim (see
// CheckTree to refuse before starting).
func TarTree(w io.Writer, src, name string, uid, gid int, lim Limits, res *sandbox.CopyResult) error {
	root, err := os.OpenRoot(filepath.Dir(src))
	if err != nil {
		return err
	}
	defer root.Close()
	base := filepath.Base(src)
	t := treeWriter{tw: tar.NewWriter(w), root: root, base: base, name: name, uid: uid, gid: gid,
		budget: Budget{Limits: lim}, res: res}
	if err := fs.WalkDir(root.FS(), base, t.entry); err != nil {
		return err
	}
	return t.tw.Close()
}

// treeWriter writes one host tree, read through root, as a tar stream.
type treeWriter struct {
	tw       *tar.Writer
	root     *os.Root
	base     string // src's name in root
	name     string // the top entry's name in the stream
	uid, gid int
	budget   Budget
	res      *sandbox.CopyResult
}

func (t *treeWriter) entry(p string, d fs.DirEntry, err error) error {
	if err != nil {
		return err
	}
	info, err := d.Info()
	if err != nil {
		return err
	}
	var f *os.File
	link := ""
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		if link, err = t.root.Readlink(p); err != nil {
			return err
		}
	case info.Mode().IsRegular():
		// Opened through the root and described by the open file itself,
		// so what is sent is what was opened.
		if f, err = t.root.Open(p); err != nil {
			return err
		}
		defer f.Close()
		if info, err = f.Stat(); err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			t.res.Skipped = append(t.res.Skipped, p+": not a regular file")
			return nil
		}
	case !info.IsDir():
		t.res.Skipped = append(t.res.Skipped, p+": not a regular file")
		return nil
	}
	size := int64(0)
	if f != nil {
		size = info.Size()
	}
	if err := t.budget.Take(size); err != nil {
		return err
	}
	hdr, err := tar.FileInfoHeader(info, link)
	if err != nil {
		return err
	}
	rel, _ := filepath.Rel(t.base, filepath.FromSlash(p))
	hdr.Name = filepath.ToSlash(filepath.Join(t.name, rel))
	hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = t.uid, t.gid, "", ""
	if err := t.tw.WriteHeader(hdr); err != nil {
		return err
	}
	if f == nil {
		return nil
	}
	n, err := io.CopyN(t.tw, f, info.Size())
	t.res.Files++
	t.res.Bytes += n
	return err
}

// Extract writes a Docker archive (top entry: the copied file or folder)
// to dst through a temporary folder beside it, renamed into place at the end
// in one step that never replaces anything already at dst, so a failed copy
// leaves nothing half-written. Each entry is counted against lim before it
// is written and each file's size checked against the host's free space;
// blocks of zeros stay holes.
func Extract(r io.Reader, dst string, lim Limits) (sandbox.CopyResult, error) {
	res := sandbox.CopyResult{Path: dst}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), ".sandtray-copy-*")
	if err != nil {
		return res, fmt.Errorf("copy to %s: %w", dst, err)
	}
	defer os.RemoveAll(tmp)
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return res, err
	}
	defer root.Close()
	tr := tar.NewReader(r)
	budget := Budget{Limits: lim}
	top := ""
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return res, fmt.Errorf("copy to %s: %w", dst, err)
		}
		if top == "" {
			top = strings.SplitN(path.Clean(hdr.Name), "/", 2)[0]
		}
		target, ok := inTree(top, hdr.Name)
		if !ok {
			res.Skipped = append(res.Skipped, hdr.Name+": name outside the copied folder")
			continue
		}
		size := entrySize(root, top, hdr)
		if err := budget.Take(size); err != nil {
			return res, err
		}
		if err := CheckFree(tmp, size); size > 0 && err != nil {
			return res, err
		}
		if err := extractEntry(root, tr, hdr, target, top, &res); err != nil {
			return res, fmt.Errorf("copy %s to %s: %w", hdr.Name, dst, err)
		}
	}
	if top == "" {
		return res, fmt.Errorf("copy to %s: the sandbox sent nothing: %w", dst, sandbox.ErrNotFound)
	}
	if _, err := os.Lstat(filepath.Join(tmp, "x")); err != nil {
		return res, fmt.Errorf("copy to %s: nothing copyable (only %s): %w", dst, strings.Join(res.Skipped, "; "), sandbox.ErrInvalid)
	}
	if err := renameNoReplace(filepath.Join(tmp, "x"), dst); isExist(err) {
		return res, fmt.Errorf("host path %s appeared during the copy, and Sandtray never overwrites host files; pick a new name: %w", dst, sandbox.ErrConflict)
	} else if err != nil {
		return res, fmt.Errorf("copy to %s: %w", dst, err)
	}
	return res, nil
}

// inTree maps an archive name under top to its place inside the temporary
// folder ("x" stands for the top entry), or reports that it lies outside.
func inTree(top, name string) (string, bool) {
	name = path.Clean(name)
	rel, ok := strings.CutPrefix(name, top)
	if !fs.ValidPath(name) || !ok || (rel != "" && rel[0] != '/') {
		return "", false
	}
	return "x" + rel, true
}

// entrySize is what writing hdr costs: a file's size, and for a hard link
// the size of the file it names, since it is copied again.
func entrySize(root *os.Root, top string, hdr *tar.Header) int64 {
	switch hdr.Typeflag {
	case tar.TypeReg:
		return hdr.Size
	case tar.TypeLink:
		if src, ok := inTree(top, hdr.Linkname); ok {
			if st, err := root.Lstat(src); err == nil && st.Mode().IsRegular() {
				return st.Size()
			}
		}
	}
	return 0
}

func extractEntry(root *os.Root, tr *tar.Reader, hdr *tar.Header, target, top string, res *sandbox.CopyResult) error {
	perm := fs.FileMode(hdr.Mode).Perm() &^ 0o022 // no setuid, setgid, sticky or group/world write
	switch hdr.Typeflag {
	case tar.TypeDir:
		return root.MkdirAll(target, perm|0o700)
	case tar.TypeReg:
		return writeEntry(root, target, perm, tr, res)
	case tar.TypeLink:
		// A second name of a file already extracted: copied again from
		// inside the root, never linked, so the file is not lost and no
		// link reaches the host.
		src, ok := inTree(top, hdr.Linkname)
		if st, err := root.Lstat(src); !ok || err != nil || !st.Mode().IsRegular() {
			res.Skipped = append(res.Skipped, hdr.Name+": hard link to "+hdr.Linkname+", which was not copied")
			return nil
		}
		f, err := root.Open(src)
		if err != nil {
			return err
		}
		defer f.Close()
		return writeEntry(root, target, perm, f, res)
	case tar.TypeSymlink:
		res.Skipped = append(res.Skipped, hdr.Name+": link not copied (links from a sandbox are never written to the host)")
	default:
		res.Skipped = append(res.Skipped, hdr.Name+": special file not copied")
	}
	return nil
}

// writeEntry creates target (which must not exist) inside root with r's bytes.
func writeEntry(root *os.Root, target string, perm fs.FileMode, r io.Reader, res *sandbox.CopyResult) error {
	if dir := path.Dir(target); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	f, err := root.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm|0o600)
	if err != nil {
		return err
	}
	n, err := writeSparse(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	res.Files++
	res.Bytes += n
	return err
}
