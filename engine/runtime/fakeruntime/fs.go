package fakeruntime

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// node is one file, folder or symlink.
type node struct {
	mode     fs.FileMode // with its type bits
	data     []byte
	link     string
	uid, gid int
	mtime    time.Time
	written  bool // written in the container, not the image's (SizeRw)
}

// memFS is a filesystem of clean absolute paths. It has no lock of its
// own: the daemon's lock guards it.
type memFS map[string]*node

func newFS() memFS {
	now := time.Now()
	return memFS{"/": {mode: fs.ModeDir | 0o755, mtime: now}}
}

func (m memFS) clone() memFS {
	out := make(memFS, len(m))
	for p, n := range m {
		c := *n
		c.data = bytes.Clone(n.data)
		out[p] = &c
	}
	return out
}

func clean(p string) string { return path.Clean("/" + p) }

// mkdirAll makes dir and its parents, as uid:gid.
func (m memFS) mkdirAll(dir string, mode fs.FileMode, uid, gid int, written bool) error {
	dir = clean(dir)
	if n, ok := m[dir]; ok {
		if !n.mode.IsDir() {
			return fmt.Errorf("mkdir %s: not a folder: %w", dir, sandbox.ErrConflict)
		}
		return nil
	}
	if dir != "/" {
		if err := m.mkdirAll(path.Dir(dir), mode, uid, gid, written); err != nil {
			return err
		}
	}
	m[dir] = &node{mode: fs.ModeDir | mode.Perm(), uid: uid, gid: gid, mtime: time.Now(), written: written}
	return nil
}

// writeFile writes data to p, making its parents.
func (m memFS) writeFile(p string, data []byte, mode fs.FileMode, written bool) error {
	p = clean(p)
	if n, ok := m[p]; ok && n.mode.IsDir() {
		return fmt.Errorf("write %s: is a folder: %w", p, sandbox.ErrConflict)
	}
	if err := m.mkdirAll(path.Dir(p), 0o755, 0, 0, written); err != nil {
		return err
	}
	m[p] = &node{mode: mode.Perm(), data: bytes.Clone(data), mtime: time.Now(), written: written}
	return nil
}

// remove removes p and what is under it.
func (m memFS) remove(p string) {
	p = clean(p)
	if p == "/" {
		return
	}
	for q := range m {
		if q == p || strings.HasPrefix(q, p+"/") {
			delete(m, q)
		}
	}
}

// under lists the paths under dir (not dir itself), sorted.
func (m memFS) under(dir string) []string {
	prefix := strings.TrimSuffix(clean(dir), "/") + "/"
	var out []string
	for q := range m {
		if strings.HasPrefix(q, prefix) {
			out = append(out, q)
		}
	}
	sort.Strings(out)
	return out
}

// written sums the sizes of the files written in the container.
func (m memFS) writtenSize() int64 {
	var n int64
	for _, f := range m {
		if f.written {
			n += int64(len(f.data))
		}
	}
	return n
}

func (n *node) stat(name string) runtime.PathStat {
	return runtime.PathStat{Name: name, Size: int64(len(n.data)), Mode: uint32(n.mode), ModTime: n.mtime, LinkTarget: n.link}
}

// extract writes a tar stream's entries into the existing folder dir, as
// Docker's copy into a container does: entries keep the owner, mode and
// mtime of their headers, and a folder is never replaced by a file nor the
// other way round.
func (m memFS) extract(dir string, r io.Reader) error {
	dir = clean(dir)
	d, ok := m[dir]
	if !ok {
		return fmt.Errorf("no such folder %s: %w", dir, sandbox.ErrNotFound)
	}
	if !d.mode.IsDir() {
		return fmt.Errorf("extraction point %s is not a folder: %w", dir, sandbox.ErrInvalid)
	}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read the archive: %w (%w)", sandbox.ErrInvalid, err)
		}
		p := clean(path.Join(dir, hdr.Name))
		if p != dir && !strings.HasPrefix(p, dir+"/") && dir != "/" {
			return fmt.Errorf("archive entry %q leaves %s: %w", hdr.Name, dir, sandbox.ErrInvalid)
		}
		old, exists := m[p]
		isDir := hdr.Typeflag == tar.TypeDir
		if exists && old.mode.IsDir() != isDir {
			return fmt.Errorf("cannot replace %s with an entry of another kind: %w", p, sandbox.ErrInvalid)
		}
		if err := m.mkdirAll(path.Dir(p), 0o755, 0, 0, true); err != nil {
			return err
		}
		n := &node{mode: fs.FileMode(hdr.Mode).Perm(), uid: hdr.Uid, gid: hdr.Gid, mtime: hdr.ModTime, written: true}
		switch hdr.Typeflag {
		case tar.TypeDir:
			n.mode |= fs.ModeDir
		case tar.TypeSymlink:
			n.mode |= fs.ModeSymlink
			n.link = hdr.Linkname
		case tar.TypeReg:
			data, err := io.ReadAll(tr)
			if err != nil {
				return fmt.Errorf("read the archive: %w (%w)", sandbox.ErrInvalid, err)
			}
			n.data = data
		default:
			continue // devices, hard links: not in the fake
		}
		m[p] = n
	}
}

// archive is a tar stream of p (and what is under it), its top entry named
// after p's base name, as Docker's copy out of a container is.
func (m memFS) archive(p string) ([]byte, runtime.PathStat, error) {
	p = clean(p)
	n, ok := m[p]
	if !ok {
		return nil, runtime.PathStat{}, fmt.Errorf("no such file or folder %s: %w", p, sandbox.ErrNotFound)
	}
	base := path.Base(p)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := writeEntry(tw, base, n); err != nil {
		return nil, runtime.PathStat{}, err
	}
	if n.mode.IsDir() {
		for _, q := range m.under(p) {
			if err := writeEntry(tw, path.Join(base, strings.TrimPrefix(q, strings.TrimSuffix(p, "/")+"/")), m[q]); err != nil {
				return nil, runtime.PathStat{}, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, runtime.PathStat{}, err
	}
	return buf.Bytes(), n.stat(base), nil
}

func writeEntry(tw *tar.Writer, name string, n *node) error {
	hdr := &tar.Header{Name: name, Mode: int64(n.mode.Perm()), Uid: n.uid, Gid: n.gid, ModTime: n.mtime, Format: tar.FormatPAX}
	switch {
	case n.mode.IsDir():
		hdr.Typeflag, hdr.Name = tar.TypeDir, name+"/"
	case n.mode&fs.ModeSymlink != 0:
		hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, n.link
	default:
		hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(n.data))
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if hdr.Typeflag == tar.TypeReg {
		_, err := tw.Write(n.data)
		return err
	}
	return nil
}
