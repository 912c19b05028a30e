package files

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Write writes data to the file p (absolute) in t, creating missing parent
// folders, owned by the sandbox's user.
func (f *Files) Write(ctx context.Context, t sandbox.Handle, p string, data []byte, mode fs.FileMode) error {
	dir := path.Dir(p)
	if st, err := f.docker.StatPath(ctx, t.ID(), dir); errors.Is(err, sandbox.ErrNotFound) {
		if err := f.Mkdir(ctx, t, dir); err != nil {
			return err
		}
	} else if err != nil {
		return t.Gone(fmt.Errorf("write %s: %w", p, err))
	} else if !fs.FileMode(st.Mode).IsDir() {
		return fmt.Errorf("cannot write %s: %s is not a folder: %w", p, dir, sandbox.ErrConflict)
	}
	uid, gid, err := f.Owner(ctx, t)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{Name: path.Base(p), Mode: int64(mode), Size: int64(len(data)), ModTime: time.Now(), Typeflag: tar.TypeReg,
		Uid: uid, Gid: gid}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	tw.Write(data)
	if err := tw.Close(); err != nil {
		return err
	}
	if err := f.docker.CopyTo(ctx, t.ID(), dir, &buf); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// Owner returns the ids that own what write_file and copy_to_sandbox put
// in t. Docker extracts those archives as root and applies the owner in each
// header, so without this a sandbox whose sandbox.user is not root could not
// change its own files. A sandbox with no sandbox.user runs as its image's
// user and gets root's files, as it always has.
func (f *Files) Owner(ctx context.Context, t sandbox.Handle) (uid, gid int, err error) {
	if t.User() == "" {
		return 0, 0, nil
	}
	uid, gid, err = f.docker.UserIDs(ctx, t.ID(), t.User())
	if err != nil {
		return 0, 0, t.Gone(fmt.Errorf("find the ids of user %q in sandbox %s: %w", t.User(), t.Name(), err))
	}
	return uid, gid, nil
}

// Mkdir creates a folder and its parents inside the sandbox.
func (f *Files) Mkdir(ctx context.Context, t sandbox.Handle, dir string) error {
	var out bytes.Buffer
	code, err := f.docker.Exec(ctx, t.ID(), execOptions([]string{"mkdir", "-p", "--", dir}, &out))
	if err != nil {
		return t.Gone(fmt.Errorf("create folder %s: %w", dir, err))
	}
	if code != 0 {
		return fmt.Errorf("cannot create folder %s: %s: %w", dir, bytes.TrimSpace(out.Bytes()), sandbox.ErrConflict)
	}
	return nil
}

// Remove removes p (a file or a folder with its contents) inside the
// sandbox: what a failed copy left half written.
func (f *Files) Remove(ctx context.Context, t sandbox.Handle, p string) error {
	var out bytes.Buffer
	code, err := f.docker.Exec(ctx, t.ID(), execOptions([]string{"rm", "-rf", "--", p}, &out))
	if err != nil {
		return t.Gone(fmt.Errorf("remove %s: %w", p, err))
	}
	if code != 0 {
		return fmt.Errorf("cannot remove %s: %s: %w", p, bytes.TrimSpace(out.Bytes()), sandbox.ErrConflict)
	}
	return nil
}

// resolve follows symlinks (inside the sandbox) and refuses folders and
// special files with a message saying what to use instead.
func (f *Files) resolve(ctx context.Context, t sandbox.Handle, p string) (string, error) {
	for range 16 {
		st, err := f.docker.StatPath(ctx, t.ID(), p)
		if errors.Is(err, sandbox.ErrNotFound) {
			return "", fmt.Errorf("no file %s in sandbox %s; list_files shows what is there: %w", p, t.Name(), sandbox.ErrNotFound)
		}
		if err != nil {
			return "", t.Gone(fmt.Errorf("stat %s: %w", p, err))
		}
		mode := fs.FileMode(st.Mode)
		switch {
		case mode&fs.ModeSymlink != 0:
			target := st.LinkTarget
			if !path.IsAbs(target) {
				target = path.Join(path.Dir(p), target)
			}
			p = target
		case mode.IsDir():
			return "", fmt.Errorf("%s is a folder; use list_files to see inside it: %w", p, sandbox.ErrInvalid)
		case !mode.IsRegular():
			return "", fmt.Errorf("%s is not a regular file (%s): %w", p, mode.Type(), sandbox.ErrInvalid)
		default:
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links: %w", p, sandbox.ErrInvalid)
}

// MaxListDepth and maxListEntries bound a listing so a tree of / stays readable.
const (
	MaxListDepth   = 10
	maxListEntries = 5000
)

// listScript prints one NUL-terminated record per entry with GNU find. Hidden
// entries (and what is under hidden folders) are pruned unless $2 is "all".
const listScript = `cd -- "$0" || exit 3
if [ "$2" = all ]; then
  exec find . -mindepth 1 -maxdepth "$1" -printf '%y\t%s\t%m\t%T@\t%l\t%P\0'
fi
exec find . -mindepth 1 -maxdepth "$1" -name '.*' -prune -o -printf '%y\t%s\t%m\t%T@\t%l\t%P\0'`

// parseListing decodes find's records: type, size, mode, mtime, link, path.
func parseListing(raw []byte) []sandbox.FileEntry {
	var entries []sandbox.FileEntry
	for rec := range bytes.SplitSeq(raw, []byte{0}) {
		f := strings.SplitN(string(rec), "\t", 6)
		if len(f) != 6 || f[5] == "" {
			continue
		}
		size, _ := strconv.ParseInt(f[1], 10, 64)
		mode, _ := strconv.ParseUint(f[2], 8, 32)
		secs, _ := strconv.ParseFloat(f[3], 64)
		whole, frac := math.Modf(secs)
		entries = append(entries, sandbox.FileEntry{
			// Exact names (only invalid UTF-8 repaired): the model passes them back.
			Path: strings.ToValidUTF8(f[5], "\uFFFD"), Type: entryType(f[0]), Size: size,
			Mode: fmt.Sprintf("%04o", mode), ModTime: time.Unix(int64(whole), int64(frac*1e9)).UTC(),
			Target: f[4],
		})
	}
	return entries
}

func entryType(findType string) string {
	switch findType {
	case "f":
		return "file"
	case "d":
		return "dir"
	case "l":
		return "symlink"
	}
	return "other"
}

// Read reads up to limit bytes of the file p (absolute) from offset. A
// symlink is followed inside the sandbox.
func (f *Files) Read(ctx context.Context, t sandbox.Handle, p string, offset, limit int64) (sandbox.FileContent, error) {
	abs, err := f.resolve(ctx, t, p)
	if err != nil {
		return sandbox.FileContent{}, err
	}
	rc, _, err := f.docker.CopyFrom(ctx, t.ID(), abs)
	if err != nil {
		return sandbox.FileContent{}, t.Gone(fmt.Errorf("read %s: %w", abs, err))
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	hdr, err := tr.Next()
	if err != nil {
		return sandbox.FileContent{}, fmt.Errorf("read %s: %w", abs, err)
	}
	if _, err := io.CopyN(io.Discard, tr, offset); err != nil && !errors.Is(err, io.EOF) {
		return sandbox.FileContent{}, fmt.Errorf("read %s: %w", abs, err)
	}
	data, err := io.ReadAll(io.LimitReader(tr, limit))
	if err != nil {
		return sandbox.FileContent{}, fmt.Errorf("read %s: %w", abs, err)
	}
	return sandbox.FileContent{Path: abs, Data: data, Size: hdr.Size, Truncated: offset+int64(len(data)) < hdr.Size}, nil
}

// List lists the folder abs to depth levels (1: just its entries); hidden
// entries are skipped unless all is set.
func (f *Files) List(ctx context.Context, t sandbox.Handle, abs string, depth int, all bool) (sandbox.Listing, error) {
	if depth <= 0 {
		depth = 1
	}
	if err := CheckList(depth); err != nil {
		return sandbox.Listing{}, err
	}
	var errOut bytes.Buffer
	out := recordsWriter{max: maxListEntries + 1} // find's output past the cap is never kept
	opts := execOptions([]string{"/bin/sh", "-c", listScript, abs, strconv.Itoa(depth), map[bool]string{true: "all"}[all]}, &out)
	opts.Stderr = &errOut
	code, err := f.docker.Exec(ctx, t.ID(), opts)
	if err != nil {
		return sandbox.Listing{}, t.Gone(fmt.Errorf("list %s: %w", abs, err))
	}
	if code == 3 {
		return sandbox.Listing{}, fmt.Errorf("no folder %s in sandbox %s: %w", abs, t.Name(), sandbox.ErrNotFound)
	}
	if code != 0 && out.Len() == 0 {
		return sandbox.Listing{}, fmt.Errorf("list %s needs GNU find in the image: %s: %w", abs, strings.TrimSpace(errOut.String()), sandbox.ErrUnsupported)
	}
	entries := parseListing(out.Bytes())
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	if len(entries) > maxListEntries {
		entries = entries[:maxListEntries]
	}
	return sandbox.Listing{Path: abs, Entries: entries}, nil
}
