package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// maxAccountFile bounds what UserIDs reads of /etc/passwd or /etc/group.
const maxAccountFile = 4 << 20

// UserIDs resolves user, a Docker user spec ("uid", "uid:gid", "name" or
// "name:group"), to the ids that processes running as it get in container
// id, which may be created and not yet started. It resolves as runc does at
// every exec, against the container's own /etc/passwd and /etc/group, never
// the host's: a numeric user is a uid even when some user has that name, and
// without a group the gid is the user's primary group, or 0 for a uid that
// /etc/passwd does not list. A name the container does not have fails with
// sandbox.ErrInvalid.
//
// Numeric "uid:gid" reads nothing. What a lookup by name finds is kept for
// the container's life (Remove forgets it): reading a file of a running
// container costs the daemon about a tenth of a second, and the engine asks
// for every file it writes. So the ids are those of the first lookup, which
// for a container made with Create is the one that gave its workdir its
// owner, even if root in the container edits /etc/passwd later.
func (c *Client) UserIDs(ctx context.Context, id, user string) (uid, gid int, err error) {
	name, group, _ := strings.Cut(user, ":")
	_, uidErr := parseID(name)
	_, gidErr := parseID(group)
	if uidErr == nil && gidErr == nil {
		return lookupIDs(user, nil, nil)
	}
	if ids, ok := c.users.get(id, user); ok {
		return ids[0], ids[1], nil
	}
	var passwd, groups []byte
	if uidErr != nil || group == "" {
		if passwd, err = c.readAccountFile(ctx, id, "/etc/passwd"); err != nil {
			return 0, 0, err
		}
	}
	if group != "" && gidErr != nil {
		if groups, err = c.readAccountFile(ctx, id, "/etc/group"); err != nil {
			return 0, 0, err
		}
	}
	if uid, gid, err = lookupIDs(user, passwd, groups); err == nil {
		c.users.put(id, user, [2]int{uid, gid})
	}
	return uid, gid, err
}

// userCache holds UserIDs' lookups by name, per container.
type userCache struct {
	mu  sync.Mutex
	ids map[string]map[string][2]int // container id → user → {uid, gid}
}

func (u *userCache) get(id, user string) ([2]int, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	ids, ok := u.ids[id][user]
	return ids, ok
}

func (u *userCache) put(id, user string, ids [2]int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.ids == nil {
		u.ids = map[string]map[string][2]int{}
	}
	if u.ids[id] == nil {
		u.ids[id] = map[string][2]int{}
	}
	u.ids[id][user] = ids
}

func (u *userCache) forget(id string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.ids, id)
}

// lookupIDs is UserIDs' resolution, given the contents of /etc/passwd and
// /etc/group (nil when the container has none).
func lookupIDs(user string, passwd, groups []byte) (uid, gid int, err error) {
	name, group, hasGroup := strings.Cut(user, ":")
	if name == "" || (hasGroup && group == "") {
		return 0, 0, fmt.Errorf("user %q is not a user: use \"uid\", \"uid:gid\", \"name\" or \"name:group\": %w", user, sandbox.ErrInvalid)
	}
	uid, uidErr := parseID(name)
	found := false
	for f := range accountEntries(passwd) { // name:password:uid:gid:gecos:home:shell
		if len(f) < 4 {
			continue
		}
		entryUID, err1 := parseID(f[2])
		entryGID, err2 := parseID(f[3])
		if err1 != nil || err2 != nil {
			continue
		}
		if (uidErr == nil && entryUID == uid) || (uidErr != nil && f[0] == name) {
			uid, gid, found = entryUID, entryGID, true
			break
		}
	}
	if !found && uidErr != nil {
		return 0, 0, fmt.Errorf("user %q is not in the container's /etc/passwd; name a user the image has, or give numeric ids such as \"1000:1000\": %w",
			name, sandbox.ErrInvalid)
	}
	if !hasGroup {
		return uid, gid, nil
	}
	if g, err := parseID(group); err == nil {
		return uid, g, nil
	}
	for f := range accountEntries(groups) { // name:password:gid:members
		if len(f) >= 3 && f[0] == group {
			if g, err := parseID(f[2]); err == nil {
				return uid, g, nil
			}
		}
	}
	return 0, 0, fmt.Errorf("group %q is not in the container's /etc/group; name a group the image has, or give a numeric gid: %w",
		group, sandbox.ErrInvalid)
}

// parseID parses a uid or gid: digits only, at most 2³¹-1 as runc allows.
func parseID(s string) (int, error) {
	n, err := strconv.ParseUint(s, 10, 31)
	return int(n), err
}

// accountEntries yields the colon-separated fields of each non-empty line of
// an /etc/passwd or /etc/group file.
func accountEntries(file []byte) iter.Seq[[]string] {
	return func(yield func([]string) bool) {
		for line := range strings.Lines(string(file)) {
			if line = strings.TrimSpace(line); line != "" && !yield(strings.Split(line, ":")) {
				return
			}
		}
	}
}

// readAccountFile returns a small regular file of a container, following a
// symlink (Docker reports its target resolved inside the container), or nil
// when there is no such file.
func (c *Client) readAccountFile(ctx context.Context, id, p string) ([]byte, error) {
	rc, st, err := c.CopyFrom(ctx, id, p)
	if err == nil && st.LinkTarget != "" {
		rc.Close()
		rc, _, err = c.CopyFrom(ctx, id, st.LinkTarget)
	}
	if errors.Is(err, sandbox.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	hdr, err := tr.Next()
	switch {
	case err != nil:
		return nil, fmt.Errorf("read %s in container %s: %w", p, id, err)
	case hdr.Typeflag != tar.TypeReg:
		return nil, fmt.Errorf("read %s in container %s: not a regular file: %w", p, id, sandbox.ErrInvalid)
	case hdr.Size > maxAccountFile:
		return nil, fmt.Errorf("read %s in container %s: %d bytes is more than the %d it may have: %w", p, id, hdr.Size, maxAccountFile, sandbox.ErrInvalid)
	}
	data, err := io.ReadAll(tr)
	if err != nil {
		return nil, fmt.Errorf("read %s in container %s: %w", p, id, err)
	}
	return data, nil
}

// ownWorkdir makes the workdir dir of a created container owned by user, so
// that code running as the user can write in it: Docker makes a workdir the
// image lacks as root, and with every capability dropped nothing inside the
// container could chown it. It puts an archive holding only the folder's
// entry (its mode and time kept, its owner the user's ids) at the folder's
// place; the daemon extracts it as root, and for a folder that exists that
// only sets the owner, mode and time. The root folder is left alone.
func (c *Client) ownWorkdir(ctx context.Context, id, user, dir string) error {
	uid, gid, err := c.UserIDs(ctx, id, user)
	if err != nil {
		return err
	}
	dir = path.Clean(dir)
	st, err := c.StatPath(ctx, id, dir)
	if err == nil && st.LinkTarget != "" {
		dir = st.LinkTarget
		st, err = c.StatPath(ctx, id, dir)
	}
	if err != nil {
		return err
	}
	mode := fs.FileMode(st.Mode)
	if !mode.IsDir() {
		return fmt.Errorf("workdir %s is not a folder in the image: %w", dir, sandbox.ErrInvalid)
	}
	if dir == "/" {
		return nil
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{
		Typeflag: tar.TypeDir, Name: path.Base(dir) + "/", Mode: tarMode(mode),
		Uid: uid, Gid: gid, ModTime: st.ModTime,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return c.CopyTo(ctx, id, path.Dir(dir), &buf)
}

// tarMode is a tar header's mode for Go's mode bits: permissions plus
// setuid, setgid and sticky.
func tarMode(m fs.FileMode) int64 {
	mode := int64(m.Perm())
	if m&fs.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	return mode
}
