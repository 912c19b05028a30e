package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sandtray/sandtray/engine/internal/docker"
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

// ExportDockerfile returns a Dockerfile that rebuilds the sandbox: FROM its
// base image, its env and workdir, RUN lines for the packages installed with
// pinned versions, the files added or changed (from a rootfs.tar build
// context) and RUN rm for files of the image it deleted. With hostPath, a
// folder under the allowed roots, it also writes Dockerfile, .dockerignore
// and rootfs.tar there (see SaveDockerfile for which folders are accepted).
func (e *Engine) ExportDockerfile(ctx context.Context, owner sandbox.Owner, ref, hostPath string) (sandbox.Export, error) {
	dir := ""
	if hostPath != "" {
		var err error
		if dir, err = e.hostPath(hostPath, false); err != nil {
			return sandbox.Export{}, err
		}
	}
	return e.export(ctx, owner, ref, dir)
}

// SaveDockerfile writes a sandbox's export (see ExportDockerfile) to hostDir,
// a folder the user picked in the app, so it skips the allowed-roots check.
// The folder must be new (its parent exists), empty, or hold an earlier
// Sandtray export, whose Dockerfile, .dockerignore and rootfs.tar are then
// replaced; anything else is refused with sandbox.ErrConflict.
func (e *Engine) SaveDockerfile(ctx context.Context, ref, hostDir string) (sandbox.Export, error) {
	if !filepath.IsAbs(hostDir) {
		return sandbox.Export{}, fmt.Errorf("folder %q must be an absolute path: %w", hostDir, sandbox.ErrInvalid)
	}
	dir, err := filepath.EvalSymlinks(hostDir)
	if errors.Is(err, os.ErrNotExist) {
		parent, perr := filepath.EvalSymlinks(filepath.Dir(hostDir))
		if perr != nil {
			return sandbox.Export{}, fmt.Errorf("folder %s does not exist: %w", filepath.Dir(hostDir), sandbox.ErrNotFound)
		}
		dir, err = filepath.Join(parent, filepath.Base(hostDir)), nil
	}
	if err != nil {
		return sandbox.Export{}, fmt.Errorf("folder %s: %w", hostDir, err)
	}
	return e.export(ctx, sandbox.Owner{Client: "Sandtray app"}, ref, dir)
}

func (e *Engine) export(ctx context.Context, owner sandbox.Owner, ref, dir string) (sandbox.Export, error) {
	b, err := e.ready(ctx, ref)
	if err != nil {
		return sandbox.Export{}, err
	}
	defer e.release(b)
	var root *os.Root
	if dir != "" {
		// Checked first: a refused folder should not cost a diff.
		if root, err = openExportDir(dir); err != nil {
			return sandbox.Export{}, err
		}
		defer root.Close()
	}
	p, err := e.planExport(ctx, b)
	if err != nil {
		return sandbox.Export{}, err
	}
	if root == nil {
		ex := sandbox.Export{Dockerfile: p.dockerfile(len(p.roots) > 0), Files: []string{}}
		if len(p.roots) > 0 {
			ex.Files = []string{archiveName}
		}
		e.record(b.id, activityFor("export_dockerfile", owner, "(returned as text)", nil, fmt.Sprintf("%d paths to archive", len(p.roots))))
		return ex, nil
	}
	ex, err := e.writeExport(ctx, b, p, root, dir)
	e.record(b.id, activityFor("export_dockerfile", owner, dir, err, strings.Join(ex.Files, " ")))
	return ex, err
}

// planExport reads the sandbox's diff, base image and manifest.
func (e *Engine) planExport(ctx context.Context, b *box) (*exportPlan, error) {
	e.mu.Lock()
	p := &exportPlan{name: b.name, id: b.id, env: b.spec.Env, workdir: b.spec.Workdir,
		packages: slices.Clone(b.state.Packages)}
	e.mu.Unlock()
	if err := e.planBase(ctx, b, p); err != nil {
		return nil, err
	}
	changes, err := e.docker.Diff(ctx, b.id)
	if err != nil {
		return nil, e.gone(b, fmt.Errorf("diff sandbox %s: %w", b.name, err))
	}
	if err := e.planPackages(ctx, b, p, changes); err != nil {
		return nil, err
	}
	if err := e.planPaths(ctx, b, p, changes); err != nil {
		return nil, err
	}
	return p, nil
}

// planBase picks the FROM line: the sandbox's image reference, pinned to
// the digest of the image the sandbox really runs when the image has one.
func (e *Engine) planBase(ctx context.Context, b *box, p *exportPlan) error {
	ctr, err := e.docker.Inspect(ctx, b.id)
	if err != nil {
		return e.gone(b, fmt.Errorf("inspect sandbox %s: %w", b.name, err))
	}
	img, err := e.docker.InspectImage(ctx, ctr.ImageID)
	if err != nil {
		return fmt.Errorf("inspect the base image of sandbox %s: %w", b.name, err)
	}
	p.from, p.user = b.spec.Image, img.User
	if d := digestFor(b.spec.Image, img.RepoDigests); d != "" {
		p.from += "@" + d
	}
	if now, err := e.docker.InspectImage(ctx, b.spec.Image); err != nil || now.ID != img.ID {
		p.note = fmt.Sprintf("%s no longer names the image this sandbox was created from (%s); build may differ", b.spec.Image, short(strings.TrimPrefix(img.ID, "sha256:")))
	}
	return nil
}

// digestFor returns the digest among repoDigests ("repo@sha256:...") of
// image's repository, or "".
func digestFor(image string, repoDigests []string) string {
	tag, err := docker.NormalizeTag(image)
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
func (e *Engine) planPaths(ctx context.Context, b *box, p *exportPlan, changes []docker.Change) error {
	added := map[string]bool{}
	var all []string
	for _, c := range changes {
		all = append(all, c.Path)
		if c.Kind == docker.ChangeAdded {
			added[c.Path] = true
		}
	}
	for _, c := range changes {
		// An archived (added, kept) ancestor brings the path along.
		if p.filter.skips(c.Path) || hasAncestor(c.Path, func(a string) bool { return added[a] && !p.filter.skips(a) }) {
			continue
		}
		switch {
		case c.Kind == docker.ChangeDeleted:
			p.deleted = append(p.deleted, c.Path)
		case c.Kind == docker.ChangeAdded:
			p.roots = append(p.roots, c.Path)
		case !isAncestorOfAny(c.Path, all):
			st, err := e.docker.StatPath(ctx, b.id, c.Path)
			if err == nil && !os.FileMode(st.Mode).IsDir() {
				p.roots = append(p.roots, c.Path)
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
