package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/internal/agentclient"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Write writes data to the file p (absolute) in t, creating missing parent
// folders, as the sandbox's user: whole or not at all.
func (f *Files) Write(ctx context.Context, t sandbox.Handle, p string, data []byte, mode fs.FileMode) error {
	s, err := f.session(ctx, t)
	if err != nil {
		return err
	}
	err = s.Write(ctx, agentWrite(p, data, mode))
	switch {
	case errors.Is(err, sandbox.ErrConflict):
		return fmt.Errorf("cannot write %s: %s is not a folder, or %s is one: %w", p, path.Dir(p), p, sandbox.ErrConflict)
	case err != nil:
		return t.Gone(fmt.Errorf("write %s: %w", p, err))
	}
	return nil
}

// Mkdir creates a folder and its parents inside the sandbox.
func (f *Files) Mkdir(ctx context.Context, t sandbox.Handle, dir string) error {
	s, err := f.session(ctx, t)
	if err != nil {
		return err
	}
	if err := s.Mkdir(ctx, dir); err != nil {
		if errors.Is(err, sandbox.ErrConflict) || errors.Is(err, sandbox.ErrForbidden) {
			return fmt.Errorf("cannot create folder %s: %w", dir, err)
		}
		return t.Gone(fmt.Errorf("create folder %s: %w", dir, err))
	}
	return nil
}

// Remove removes p and what is under it.
func (f *Files) Remove(ctx context.Context, t sandbox.Handle, p string) error {
	s, err := f.session(ctx, t)
	if err != nil {
		return err
	}
	if err := s.Remove(ctx, p); err != nil {
		return fmt.Errorf("cannot remove %s: %w", p, err)
	}
	return nil
}

// MaxListDepth and maxListEntries bound a listing so a tree of / stays readable.
const (
	MaxListDepth   = 10
	maxListEntries = 5000
)

// Read reads up to limit bytes of the file p (absolute) from offset. A
// symlink is followed inside the sandbox; a folder or a special file is
// refused with a message saying what to use instead.
func (f *Files) Read(ctx context.Context, t sandbox.Handle, p string, offset, limit int64) (sandbox.FileContent, error) {
	s, err := f.session(ctx, t)
	if err != nil {
		return sandbox.FileContent{}, err
	}
	data, st, err := s.Read(ctx, p, offset, limit)
	switch {
	case errors.Is(err, sandbox.ErrNotFound):
		return sandbox.FileContent{}, fmt.Errorf("no file %s in sandbox %s; list_files shows what is there: %w", p, t.Name(), sandbox.ErrNotFound)
	case errors.Is(err, sandbox.ErrConflict):
		return sandbox.FileContent{}, fmt.Errorf("%s is a folder; use list_files to see inside it: %w", p, sandbox.ErrInvalid)
	case errors.Is(err, sandbox.ErrInvalid):
		return sandbox.FileContent{}, fmt.Errorf("cannot read %s: %w", p, err)
	case err != nil:
		return sandbox.FileContent{}, t.Gone(fmt.Errorf("read %s: %w", p, err))
	}
	return sandbox.FileContent{Path: p, Data: data, Size: st.Size, Truncated: offset+int64(len(data)) < st.Size}, nil
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
	s, err := f.session(ctx, t)
	if err != nil {
		return sandbox.Listing{}, err
	}
	raw, _, err := s.List(ctx, abs, depth, all, maxListEntries)
	switch {
	case errors.Is(err, sandbox.ErrNotFound), errors.Is(err, sandbox.ErrConflict):
		return sandbox.Listing{}, fmt.Errorf("no folder %s in sandbox %s: %w", abs, t.Name(), sandbox.ErrNotFound)
	case err != nil:
		return sandbox.Listing{}, t.Gone(fmt.Errorf("list %s: %w", abs, err))
	}
	entries := make([]sandbox.FileEntry, 0, len(raw))
	for _, e := range raw {
		entries = append(entries, sandbox.FileEntry{
			// Exact names (only invalid UTF-8 repaired): the model passes them back.
			Path: strings.ToValidUTF8(e.Path, "\uFFFD"), Type: e.Type, Size: e.Size,
			Mode: fmt.Sprintf("%04o", fs.FileMode(e.Mode).Perm()|permExtra(e.Mode)), ModTime: time.Unix(0, e.ModTime).UTC(),
			Target: strings.ToValidUTF8(e.Link, "\uFFFD"),
		})
	}
	return sandbox.Listing{Path: abs, Entries: entries}, nil
}

// permExtra is the setuid, setgid and sticky bits of a Go mode as the
// octal digit before the permissions (find's %m has them).
func permExtra(m uint32) fs.FileMode {
	fm, extra := fs.FileMode(m), fs.FileMode(0)
	if fm&fs.ModeSetuid != 0 {
		extra |= 0o4000
	}
	if fm&fs.ModeSetgid != 0 {
		extra |= 0o2000
	}
	if fm&fs.ModeSticky != 0 {
		extra |= 0o1000
	}
	return extra
}

// agentWrite is the agent's write of data to p, parents made as needed.
func agentWrite(p string, data []byte, mode fs.FileMode) agentclient.Write {
	return agentclient.Write{Path: p, Data: bytes.NewReader(data), Size: int64(len(data)), Mode: uint32(mode.Perm()), Parents: true}
}
