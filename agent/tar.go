//go:build linux

package agent

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/sandtray/sandtray/agent/wire"
)

// tarOut answers, then writes a tar of p whose top entry is p's own name,
// as Docker's archive API does; symlinks are stored, never followed.
func tarOut(w io.Writer, p string) error {
	if _, err := os.Lstat(p); err != nil {
		return err
	}
	if err := wire.WriteJSON(w, wire.KindReply, wire.Reply{}); err != nil {
		return nil
	}
	_ = writeTar(w, p)
	return nil
}

// writeTar writes the tar of p to w.
func writeTar(w io.Writer, p string) error {
	tw := tar.NewWriter(w)
	base := path.Dir(p)
	err := filepath.WalkDir(p, func(full string, d fs.DirEntry, err error) error {
		if err != nil {
			if full == p {
				return err
			}
			return nil // a folder that cannot be read is left out
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		var f *os.File
		if fi.Mode().IsRegular() {
			// Opened without following a link, and described by what
			// was opened: the sandbox may swap the path for a link, a
			// FIFO or another file between the listing and the open.
			if f, err = os.OpenFile(full, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0); err != nil {
				return nil // unreadable, or no longer a file: left out
			}
			defer f.Close()
			if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
				return nil
			}
		}
		link := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			link, _ = os.Readlink(full)
		}
		hdr, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return nil // a socket, say: not in a tar
		}
		rel, _ := filepath.Rel(base, full)
		hdr.Name = rel
		if fi.IsDir() {
			hdr.Name += "/"
		}
		hdr.Uname, hdr.Gname = "", ""
		if !fi.Mode().IsRegular() {
			hdr.Size = 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if f != nil {
			n, err := io.CopyN(tw, f, hdr.Size)
			if errors.Is(err, io.EOF) {
				// It shrank while copied: the rest as zeros, so the
				// archive stays whole.
				_, err = io.CopyN(tw, zeros{}, hdr.Size-n)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	return errors.Join(err, tw.Close())
}

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// tarIn extracts the tar r carries into dir (which must exist): names are
// relative to it and never climb out of it; regular files, folders and
// symlinks only. As root, entries get the owner uid:gid when given, else
// the one in their header.
func tarIn(r io.Reader, dir string, uid, gid int) error {
	err := extract(r, dir, uid, gid)
	if err != nil {
		_, _ = io.Copy(io.Discard, r)
	}
	return err
}

func extract(r io.Reader, dir string, uid, gid int) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder: %w", dir, syscall.ENOTDIR)
	}
	root := os.Getuid() == 0
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read the archive: %w", err)
		}
		name := path.Clean("/" + hdr.Name)
		if name == "/" {
			continue
		}
		full := path.Join(dir, name)
		mode := fs.FileMode(hdr.Mode) & 0o7777
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.Mkdir(full, mode|0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
		case tar.TypeReg:
			os.Remove(full)
			f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, mode)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if err = errors.Join(err, f.Close()); err != nil {
				return err
			}
		case tar.TypeSymlink:
			os.Remove(full)
			if err := os.Symlink(hdr.Linkname, full); err != nil {
				return err
			}
		default:
			continue
		}
		if root {
			u, g := hdr.Uid, hdr.Gid
			if uid > 0 || gid > 0 {
				u, g = uid, gid
			}
			_ = os.Lchown(full, u, g)
		}
		if hdr.Typeflag != tar.TypeSymlink {
			_ = os.Chmod(full, mode)
		}
	}
}

// fileCmd is the file subcommands the engine runs with an exec where its
// runtime cannot reach (a tmpfs, from outside): stat prints the path's
// wire.Stat as JSON, tarout writes its tar to stdout, tarin extracts stdin
// into a folder, emptydir removes what a folder holds.
func fileCmd(cmd string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 1 || !path.IsAbs(args[0]) {
		return fail(stderr, "%s needs one absolute path", cmd)
	}
	p := path.Clean(args[0])
	var err error
	switch cmd {
	case "stat":
		var s *wire.Stat
		if s, err = statPath(p); err == nil {
			err = json.NewEncoder(stdout).Encode(s)
		}
	case "tarout":
		if _, err = os.Lstat(p); err == nil {
			err = writeTar(stdout, p)
		}
	case "tarin":
		err = tarIn(stdin, p, -1, -1)
	case "emptydir":
		err = emptyDir(p)
	}
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stderr, "sandtray-agent: %s: no such file or folder\n", p)
		return 3
	}
	if err != nil {
		return fail(stderr, "%s %s: %v", cmd, p, err)
	}
	return 0
}

// emptyDir removes everything in dir, keeping dir.
func emptyDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range names {
		if strings.Contains(n, "/") {
			continue
		}
		errs = append(errs, os.RemoveAll(path.Join(dir, n)))
	}
	return errors.Join(errs...)
}

// removeAllCmd ("removeall PATH...") removes each path and what is under
// it, making each folder its user's to write first (a folder its owner
// made read-only would keep its files); it says on stderr what it could
// not remove, and exits 1 then.
func removeAllCmd(args []string, stderr io.Writer) int {
	failed := 0
	for _, p := range args {
		if !path.IsAbs(p) || path.Clean(p) == "/" {
			continue
		}
		_ = filepath.WalkDir(p, func(full string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(full, 0o700)
			}
			return nil
		})
		if err := os.RemoveAll(p); err != nil {
			failed++
			if failed <= 10 {
				fmt.Fprintf(stderr, "sandtray-agent: %v\n", err)
			}
		}
	}
	if failed > 0 {
		return 1
	}
	return 0
}

// maxPEM bounds the certificate trustCA reads.
const maxPEM = 64 << 10

// trustCACmd ("trustca FILE BUNDLE") writes the PEM certificate on stdin to
// FILE and appends it to BUNDLE unless BUNDLE has it already (its second
// line, the first of its base64, is there): the gate's CA in the sandbox's
// trust store, as root.
func trustCACmd(args []string, stdin io.Reader, stderr io.Writer) int {
	if len(args) != 2 || !path.IsAbs(args[0]) || !path.IsAbs(args[1]) {
		return fail(stderr, "trustca needs FILE and BUNDLE, absolute")
	}
	pem, err := io.ReadAll(io.LimitReader(stdin, maxPEM))
	if err != nil {
		return fail(stderr, "trustca: %v", err)
	}
	pem = append(bytes.TrimSpace(pem), '\n')
	lines := bytes.SplitN(pem, []byte("\n"), 3)
	if len(lines) < 3 || !bytes.HasPrefix(lines[0], []byte("-----BEGIN CERTIFICATE-----")) {
		return fail(stderr, "trustca: stdin is not a PEM certificate")
	}
	for _, d := range []string{path.Dir(args[0]), path.Dir(args[1])} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fail(stderr, "trustca: %v", err)
		}
	}
	if err := os.WriteFile(args[0], pem, 0o644); err != nil {
		return fail(stderr, "trustca: %v", err)
	}
	if have, ok := readBounded(args[1], 64<<20); ok && bytes.Contains(have, lines[1]) {
		return 0
	}
	f, err := os.OpenFile(args[1], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fail(stderr, "trustca: %v", err)
	}
	_, err = f.Write(pem)
	if err = errors.Join(err, f.Close()); err != nil {
		return fail(stderr, "trustca: %v", err)
	}
	return 0
}
