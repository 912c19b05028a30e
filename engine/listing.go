package engine

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// maxListDepth and maxListEntries bound a listing so a tree of / stays readable.
const (
	maxListDepth   = 10
	maxListEntries = 5000
)

// listScript prints one NUL-terminated record per entry with GNU find. Hidden
// entries (and what is under hidden folders) are pruned unless $2 is "all".
const listScript = `cd -- "$0" || exit 3
if [ "$2" = all ]; then
  exec find . -mindepth 1 -maxdepth "$1" -printf '%y\t%s\t%m\t%T@\t%l\t%P\0'
fi
exec find . -mindepth 1 -maxdepth "$1" -name '.*' -prune -o -printf '%y\t%s\t%m\t%T@\t%l\t%P\0'`

// ListFiles lists a folder inside a sandbox to depth levels (1: just its
// entries). Hidden entries are skipped unless all is set.
func (e *Engine) ListFiles(ctx context.Context, owner sandbox.Owner, ref, p string, depth int, all bool) (sandbox.Listing, error) {
	if depth <= 0 {
		depth = 1
	}
	if depth > maxListDepth {
		return sandbox.Listing{}, fmt.Errorf("depth %d is too deep; use at most %d: %w", depth, maxListDepth, sandbox.ErrInvalid)
	}
	b, err := e.ready(ctx, ref)
	if err != nil {
		return sandbox.Listing{}, err
	}
	defer e.release(b)
	if p == "" {
		p = "."
	}
	abs := sandboxPath(b, p)
	var out, errOut bytes.Buffer
	opts := dockerExec([]string{"/bin/sh", "-c", listScript, abs, strconv.Itoa(depth), map[bool]string{true: "all"}[all]}, &out)
	opts.Stderr = &errOut
	code, err := e.docker.Exec(ctx, b.id, opts)
	if err != nil {
		return sandbox.Listing{}, e.gone(b, fmt.Errorf("list %s: %w", abs, err))
	}
	if code == 3 {
		return sandbox.Listing{}, fmt.Errorf("no folder %s in sandbox %s: %w", abs, b.name, sandbox.ErrNotFound)
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

// Diff lists the paths added, changed and deleted in a sandbox against its
// image, limited to those under p when p is given.
func (e *Engine) Diff(ctx context.Context, owner sandbox.Owner, ref, p string) (sandbox.Diff, error) {
	b, err := e.acquire(ref)
	if err != nil {
		return sandbox.Diff{}, err
	}
	defer e.release(b)
	changes, err := e.docker.Diff(ctx, b.id)
	if err != nil {
		return sandbox.Diff{}, e.gone(b, fmt.Errorf("diff sandbox %s: %w", b.name, err))
	}
	prefix := ""
	if p != "" {
		prefix = sandboxPath(b, p)
	}
	d := sandbox.Diff{Added: []string{}, Changed: []string{}, Deleted: []string{}}
	for _, c := range changes {
		if prefix != "" && prefix != "/" && c.Path != prefix && !strings.HasPrefix(c.Path, prefix+"/") {
			continue
		}
		if strings.HasPrefix(c.Path, pidDir) {
			continue // the engine's own bookkeeping
		}
		switch c.Kind {
		case "added":
			d.Added = append(d.Added, c.Path)
		case "deleted":
			d.Deleted = append(d.Deleted, c.Path)
		default:
			d.Changed = append(d.Changed, c.Path)
		}
	}
	return d, nil
}
