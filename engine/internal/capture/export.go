package capture

import (
	"context"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/sandtray/sandtray/engine/imageref"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// exportPlan is what an export rebuilds: the base image, the sandbox's env
// and workdir, its packages, the paths to archive and the paths to delete.
type exportPlan struct {
	name, id string
	from     string // FROM reference, with a digest when known
	note     string // a warning about the base image, or ""
	user     string // the base image's user
	env      map[string]string
	workdir  string
	packages []sandbox.Package // the manifest, plus apt packages installed by hand
	roots    []string          // archived with their contents (filtered)
	deleted  []string
	filter   exportFilter
}

// Export builds a Dockerfile that rebuilds t: FROM its base image, its env
// and workdir, RUN lines for the packages installed with pinned versions,
// the files added or changed (from a rootfs.tar build context) and RUN rm
// for files of the image it deleted. With dir it also writes Dockerfile,
// .dockerignore and rootfs.tar there: the folder must be new (its parent
// exists), empty, or hold exactly Sandtray's own earlier export to it, whose
// files are then replaced; anything else is refused with sandbox.ErrConflict.
// log hears of the export once it got as far as a plan: a refused folder or
// a failed diff is only the caller's error.
func (c *Capture) Export(ctx context.Context, t Target, dir string, log Log) (sandbox.Export, error) {
	ex, detail, err := c.export(ctx, t, dir)
	input := dir
	if dir == "" {
		input = "(returned as text)"
	}
	if err == nil || ex.Dir != "" {
		log(input, err, detail)
	}
	return ex, err
}

// export is Export; detail says what was exported, for the activity log.
func (c *Capture) export(ctx context.Context, t Target, dir string) (ex sandbox.Export, detail string, err error) {
	var root *os.Root
	if dir != "" {
		// Checked first: a refused folder should not cost a diff.
		if root, err = c.openExportDir(dir); err != nil {
			return sandbox.Export{}, "", err
		}
		defer root.Close()
	}
	p, err := c.planExport(ctx, t)
	if err != nil {
		return sandbox.Export{}, "", err
	}
	if root == nil {
		ex := sandbox.Export{Dockerfile: p.dockerfile(len(p.roots) > 0), Files: []string{}}
		if len(p.roots) > 0 {
			ex.Files = []string{archiveName}
		}
		return ex, fmt.Sprintf("%d paths to archive", len(p.roots)), nil
	}
	ex, err = c.writeExport(ctx, t, p, root, dir)
	return ex, strings.Join(ex.Files, " "), err
}

// planExport reads the sandbox's diff, base image and manifest.
func (c *Capture) planExport(ctx context.Context, t Target) (*exportPlan, error) {
	p := &exportPlan{name: t.Name(), id: t.ID(), env: t.Env, workdir: t.Workdir(), packages: slices.Clone(t.Packages)}
	if err := c.planBase(ctx, t, p); err != nil {
		return nil, err
	}
	changes, err := c.docker.Diff(ctx, t.ID())
	if err != nil {
		return nil, t.Gone(fmt.Errorf("diff sandbox %s: %w", t.Name(), err))
	}
	if err := c.planPackages(ctx, t, p, changes); err != nil {
		return nil, err
	}
	if err := c.planPaths(ctx, t, p, changes); err != nil {
		return nil, err
	}
	return p, nil
}

// planBase picks the FROM line: the sandbox's image reference, pinned to
// the digest of the image the sandbox really runs when the image has one.
func (c *Capture) planBase(ctx context.Context, t Target, p *exportPlan) error {
	ctr, err := c.docker.Inspect(ctx, t.ID())
	if err != nil {
		return t.Gone(fmt.Errorf("inspect sandbox %s: %w", t.Name(), err))
	}
	img, err := c.docker.InspectImage(ctx, ctr.ImageID)
	if err != nil {
		return fmt.Errorf("inspect the base image of sandbox %s: %w", t.Name(), err)
	}
	if !validImageUser(img.User) {
		return fmt.Errorf("the base image of sandbox %s has USER %q, which is not a user name or id (name, uid, or either with :group), and Sandtray will not write it into a Dockerfile; export a sandbox of another image: %w",
			t.Name(), img.User, sandbox.ErrInvalid)
	}
	p.from, p.user = t.Image, img.User
	if d := digestFor(t.Image, img.RepoDigests); d != "" {
		p.from += "@" + d
	}
	if now, err := c.docker.InspectImage(ctx, t.Image); err != nil || now.ID != img.ID {
		p.note = fmt.Sprintf("%s no longer names the image this sandbox was created from (%s); build may differ", t.Image, sandbox.ShortID(strings.TrimPrefix(img.ID, "sha256:")))
	}
	return nil
}

// digestFor returns the digest among repoDigests ("repo@sha256:...") of
// image's repository, or "".
func digestFor(image string, repoDigests []string) string {
	tag, err := imageref.Tag(image)
	if err != nil {
		return ""
	}
	repo := tag[:strings.LastIndex(tag, ":")]
	for _, rd := range repoDigests {
		if r, d, ok := strings.Cut(rd, "@"); ok && r == repo {
			return d
		}
	}
	return ""
}

// planPaths turns the diff into archive roots and deletions. A path whose
// added ancestor is archived comes with it; changed folders are skipped
// (Docker lists every parent of a change as changed).
func (c *Capture) planPaths(ctx context.Context, t Target, p *exportPlan, changes []runtime.Change) error {
	added := map[string]bool{}
	var all []string
	for _, ch := range changes {
		all = append(all, ch.Path)
		if ch.Kind == runtime.ChangeAdded {
			added[ch.Path] = true
		}
	}
	for _, ch := range changes {
		// An archived (added, kept) ancestor brings the path along.
		if p.filter.skips(ch.Path) || hasAncestor(ch.Path, func(a string) bool { return added[a] && !p.filter.skips(a) }) {
			continue
		}
		switch {
		case ch.Kind == runtime.ChangeDeleted:
			p.deleted = append(p.deleted, ch.Path)
		case ch.Kind == runtime.ChangeAdded:
			p.roots = append(p.roots, ch.Path)
		case !isAncestorOfAny(ch.Path, all):
			st, err := c.docker.StatPath(ctx, t.ID(), ch.Path)
			if err == nil && !os.FileMode(st.Mode).IsDir() {
				p.roots = append(p.roots, ch.Path)
			}
		}
	}
	slices.Sort(p.roots)
	slices.Sort(p.deleted)
	gone := map[string]bool{}
	for _, d := range p.deleted {
		gone[d] = true
	}
	p.deleted = slices.DeleteFunc(p.deleted, func(d string) bool {
		return hasAncestor(d, func(a string) bool { return gone[a] })
	})
	return nil
}

// hasAncestor reports whether any proper ancestor of p satisfies is.
func hasAncestor(p string, is func(string) bool) bool {
	for dir := path.Dir(p); dir != "/" && dir != "."; dir = path.Dir(dir) {
		if is(dir) {
			return true
		}
	}
	return false
}

func isAncestorOfAny(p string, paths []string) bool {
	return slices.ContainsFunc(paths, func(q string) bool { return strings.HasPrefix(q, p+"/") })
}

// imageUser is a Docker USER value: a user name or id, optionally with a
// group name or id. Anything else (a line break above all) could add lines
// of its own to the Dockerfile.
var imageUser = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,63})?$`)

// validImageUser reports whether u may go into a USER line ("" is none).
func validImageUser(u string) bool { return u == "" || imageUser.MatchString(u) }
