//go:build linux

package agent

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/sandtray/sandtray/agent/wire"
)

// files answers the file operations, as the agent's user: it reads and
// writes what that user may, no more.
func (s *server) files(st *wire.Stream, req wire.Request) {
	if !path.IsAbs(req.Path) {
		replyErr(st, wire.KindInvalid, fmt.Errorf("path %q is not absolute", req.Path))
		return
	}
	p := path.Clean(req.Path)
	var err error
	switch req.Op {
	case wire.OpStat:
		var s *wire.Stat
		if s, err = statPath(p); err == nil {
			_ = wire.WriteJSON(st, wire.KindReply, wire.Reply{Stat: s})
			return
		}
	case wire.OpRead:
		err = readFile(st, p, req.Offset, req.Limit)
	case wire.OpWrite:
		err = writeFile(io.LimitReader(st, req.Size), p, req)
	case wire.OpMkdir:
		err = mkdirAll(p)
	case wire.OpRemove:
		if p == "/" {
			err = fmt.Errorf("remove /: %w", fs.ErrPermission)
		} else {
			err = os.RemoveAll(p)
		}
	case wire.OpList:
		var r wire.Reply
		if r, err = list(p, req.Depth, req.All, req.Max); err == nil {
			_ = wire.WriteJSON(st, wire.KindReply, r)
			return
		}
	case wire.OpTarOut:
		err = tarOut(st, p)
	case wire.OpTarIn:
		err = tarIn(st, p, req.UID, req.GID)
	}
	if err != nil {
		replyErr(st, wire.KindInvalid, err)
		return
	}
	if req.Op != wire.OpRead && req.Op != wire.OpTarOut {
		_ = wire.WriteJSON(st, wire.KindReply, wire.Reply{})
	}
}

// statPath describes p without following it; a symlink's Link is where it
// leads, resolved inside the sandbox (as Docker's archive stat has it).
func statPath(p string) (*wire.Stat, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	s := &wire.Stat{Name: fi.Name(), Size: fi.Size(), Mode: uint32(fi.Mode()), ModTime: fi.ModTime().Unix()}
	if fi.Mode()&fs.ModeSymlink != 0 {
		if t, err := filepath.EvalSymlinks(p); err == nil {
			s.Link = t
		} else if t, err := os.Readlink(p); err == nil {
			s.Link = t
		}
	}
	return s, nil
}

// readFile answers with the file's stat, then sends at most limit of its
// bytes from offset (it follows symlinks: they lead nowhere but the
// sandbox). A file that grows meanwhile is read to limit; the engine reads
// no more than it asked for whatever comes.
func readFile(w io.Writer, p string, offset, limit int64) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a folder: %w", p, syscall.EISDIR)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s)", p, fi.Mode().Type())
	}
	n := max(min(limit, fi.Size()-offset), 0)
	if err := wire.WriteJSON(w, wire.KindReply, wire.Reply{Stat: &wire.Stat{Name: fi.Name(), Size: fi.Size(),
		Mode: uint32(fi.Mode()), ModTime: fi.ModTime().Unix()}, Size: n}); err != nil {
		return nil
	}
	if n > 0 {
		_, _ = io.Copy(w, io.NewSectionReader(f, offset, n))
	}
	return nil
}

// writeFile writes exactly req.Size bytes from r to p: into a new file
// beside it, renamed over p once whole, so a failed write loses nothing;
// where no file can be made beside it (a folder the user may not write, a
// file mounted on its own), p is overwritten in place.
func writeFile(r io.Reader, p string, req wire.Request) error {
	dir := path.Dir(p)
	if req.Parent {
		if err := mkdirAll(dir); err != nil {
			return err
		}
	}
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a folder: %w", p, syscall.EISDIR)
	}
	mode := fs.FileMode(req.Mode & 0o7777)
	if mode == 0 {
		mode = 0o644
	}
	tmp, err := os.CreateTemp(dir, ".sandtray-write-*")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("folder %s: %w", dir, err)
		}
		return writeInPlace(r, p, mode, req)
	}
	n, err := io.Copy(tmp, r)
	if err == nil && n != req.Size {
		err = fmt.Errorf("write %s: %d of %d bytes came: %w", p, n, req.Size, io.ErrUnexpectedEOF)
	}
	err = errors.Join(err, tmp.Chmod(mode), own(tmp, req), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), p)
		if errors.Is(err, syscall.EBUSY) || errors.Is(err, syscall.EXDEV) { // p is a mount point
			var f *os.File
			if f, err = os.Open(tmp.Name()); err == nil {
				err = errors.Join(writeInPlace(f, p, mode, req), f.Close())
			}
			os.Remove(tmp.Name())
		}
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

func writeInPlace(r io.Reader, p string, mode fs.FileMode, req wire.Request) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, r)
	if err == nil && n != req.Size {
		err = fmt.Errorf("write %s: %d of %d bytes came: %w", p, n, req.Size, io.ErrUnexpectedEOF)
	}
	return errors.Join(err, f.Close())
}

// own gives f to req's owner when the agent runs as root and one is set.
func own(f *os.File, req wire.Request) error {
	if os.Getuid() != 0 || req.UID < 0 || (req.UID == 0 && req.GID == 0) {
		return nil
	}
	return f.Chown(req.UID, req.GID)
}

// mkdirAll makes p and its parents, saying which part is in the way.
func mkdirAll(p string) error {
	err := os.MkdirAll(p, 0o755)
	if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s is not a folder: %w", p, syscall.ENOTDIR)
	}
	return err
}

// list walks p to depth levels (1: its entries), hidden entries (and what
// is under hidden folders) left out unless all, at most max entries (the
// reply says when there were more).
func list(p string, depth int, all bool, max int) (wire.Reply, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return wire.Reply{}, err
	}
	if !fi.IsDir() {
		return wire.Reply{}, fmt.Errorf("%s is not a folder: %w", p, syscall.ENOTDIR)
	}
	depth = min(max1(depth), 64)
	if max <= 0 {
		max = 5000
	}
	var r wire.Reply
	var walk func(dir, rel string, level int) bool
	walk = func(dir, rel string, level int) bool {
		d, err := os.Open(dir)
		if err != nil {
			return true
		}
		names, _ := d.Readdirnames(-1)
		d.Close()
		sort.Strings(names)
		for _, n := range names {
			if !all && strings.HasPrefix(n, ".") {
				continue
			}
			if len(r.Entries) >= max {
				r.Truncated = true
				return false
			}
			full, relp := path.Join(dir, n), path.Join(rel, n)
			fi, err := os.Lstat(full)
			if err != nil {
				continue
			}
			e := wire.Entry{Path: relp, Type: entryType(fi.Mode()), Size: fi.Size(),
				Mode: uint32(fi.Mode().Perm() | fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)), ModTime: fi.ModTime().UnixNano()}
			if e.Type == "symlink" {
				e.Link, _ = os.Readlink(full)
			}
			r.Entries = append(r.Entries, e)
			if fi.IsDir() && level < depth && !walk(full, relp, level+1) {
				return false
			}
		}
		return true
	}
	walk(p, "", 1)
	return r, nil
}

func max1(n int) int {
	if n < 1 {
		return 1
	}
	return n
}

func entryType(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "other"
}
