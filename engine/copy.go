package engine

import (
	"archive/tar"
	"context"
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

// CopyToSandbox copies a host file or folder (under the allowed roots) into a
// sandbox. dest "" means the workdir; an existing folder receives the source
// by its own name; any other dest is the new name. Host symlinks are copied
// as links, never followed, so nothing outside the roots is read.
func (e *Engine) CopyToSandbox(ctx context.Context, owner sandbox.Owner, ref, hostPath, dest string) (sandbox.CopyResult, error) {
	src, err := e.hostPath(hostPath, true)
	if err != nil {
		return sandbox.CopyResult{}, err
	}
	b, err := e.ready(ctx, ref)
	if err != nil {
		return sandbox.CopyResult{}, err
	}
	defer e.release(b)
	dir, name := b.spec.Workdir, filepath.Base(src)
	if dest != "" {
		abs := sandboxPath(b, dest)
		if st, err := e.docker.StatPath(ctx, b.id, abs); err == nil && fs.FileMode(st.Mode).IsDir() {
			dir = abs
		} else {
			dir, name = path.Dir(abs), path.Base(abs)
		}
	}
	if err := e.mkdirAll(ctx, b, dir); err != nil {
		return sandbox.CopyResult{}, err
	}
	uid, gid, err := e.fileOwner(ctx, b)
	if err != nil {
		return sandbox.CopyResult{}, err
	}
	res := sandbox.CopyResult{Path: path.Join(dir, name)}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(tarHostTree(pw, src, name, uid, gid, &res)) }()
	err = e.docker.CopyTo(ctx, b.id, dir, pr)
	pr.CloseWithError(err) // unblocks the tar writer if Docker stopped reading
	e.record(b.id, activityFor("copy_to_sandbox", owner, src+" → "+res.Path, err, fmt.Sprintf("%d files, %d bytes", res.Files, res.Bytes)))
	if err != nil {
		return sandbox.CopyResult{}, fmt.Errorf("copy %s into sandbox %s: %w", src, b.name, err)
	}
	return res, nil
}

// tarHostTree writes src as a tar stream whose top entry is named name and
// whose entries are owned by uid and gid (the host's owners mean nothing in
// the sandbox).
func tarHostTree(w io.Writer, src, name string, uid, gid int, res *sandbox.CopyResult) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if info.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		} else if !info.Mode().IsRegular() && !info.IsDir() {
			res.Skipped = append(res.Skipped, p+": not a regular file")
			return nil
		}
		hdr, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		hdr.Name = filepath.ToSlash(filepath.Join(name, rel))
		hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = uid, gid, "", ""
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		n, err := io.CopyN(tw, f, info.Size())
		res.Files++
		res.Bytes += n
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// CopyFromSandbox copies a sandbox file or folder to the host, under the
// allowed roots. An existing host folder receives it by its own name; any
// other host_path is the new name, and must not exist: nothing on the host is
// overwritten. Symlinks, devices and names that would escape are skipped and
// reported; files are created through an os.Root, which refuses to follow any
// symlink out of the destination, even one swapped in during the copy.
func (e *Engine) CopyFromSandbox(ctx context.Context, owner sandbox.Owner, ref, p, hostPath string) (sandbox.CopyResult, error) {
	dst, err := e.hostPath(hostPath, false)
	if err != nil {
		return sandbox.CopyResult{}, err
	}
	return e.copyOut(ctx, owner, ref, p, dst)
}

// SaveFiles copies a sandbox file or folder to a host path a person picked
// in the GUI's save dialog: the allowed roots bind what models ask for, not
// what the user chooses. Every other rule of CopyFromSandbox holds.
func (e *Engine) SaveFiles(ctx context.Context, ref, p, hostPath string) (sandbox.CopyResult, error) {
	if !filepath.IsAbs(hostPath) {
		return sandbox.CopyResult{}, fmt.Errorf("host path %q must be absolute: %w", hostPath, sandbox.ErrInvalid)
	}
	return e.copyOut(ctx, sandbox.Owner{Client: "Sandtray app"}, ref, p, filepath.Clean(hostPath))
}

func (e *Engine) copyOut(ctx context.Context, owner sandbox.Owner, ref, p, dst string) (sandbox.CopyResult, error) {
	b, err := e.ready(ctx, ref)
	if err != nil {
		return sandbox.CopyResult{}, err
	}
	defer e.release(b)
	src := sandboxPath(b, p)
	if st, err := os.Stat(dst); err == nil && st.IsDir() {
		dst = filepath.Join(dst, path.Base(src))
	}
	if _, err := os.Lstat(dst); err == nil {
		return sandbox.CopyResult{}, fmt.Errorf("host path %s already exists and Sandtray never overwrites host files; pick a new name: %w", dst, sandbox.ErrConflict)
	}
	rc, _, err := e.docker.CopyFrom(ctx, b.id, src)
	if errors.Is(err, sandbox.ErrNotFound) {
		return sandbox.CopyResult{}, fmt.Errorf("no %s in sandbox %s: %w", src, b.name, sandbox.ErrNotFound)
	}
	if err != nil {
		return sandbox.CopyResult{}, e.gone(b, fmt.Errorf("copy %s: %w", src, err))
	}
	defer rc.Close()
	res, err := extractTar(rc, dst)
	e.record(b.id, activityFor("copy_from_sandbox", owner, src+" → "+dst, err, fmt.Sprintf("%d files, %d bytes", res.Files, res.Bytes)))
	return res, err
}

// extractTar writes a Docker archive (top entry: the copied file or folder)
// to dst through a temporary folder beside it, renamed into place at the end,
// so a failed copy leaves nothing half-written.
func extractTar(r io.Reader, dst string) (sandbox.CopyResult, error) {
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
	if err := os.Rename(filepath.Join(tmp, "x"), dst); err != nil {
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
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	res.Files++
	res.Bytes += n
	return err
}
