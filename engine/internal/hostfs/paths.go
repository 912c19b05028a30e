// Package hostfs is everything Sandtray does on the host's own filesystem
// for a model: resolving host paths under the allowed roots, writing a host
// tree as a tar stream for a sandbox, and extracting a sandbox's tar stream
// onto the host without following or writing any symlink and without
// overwriting anything.
package hostfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/homedir"
)

// Roots are the host folders (config host.allowed_roots) a model may name.
type Roots []string

// resolved returns the roots resolved through symlinks. Roots that do not
// exist are left out: nothing can be under them.
func (r Roots) resolved() []string {
	var roots []string
	for _, root := range r {
		if real, err := filepath.EvalSymlinks(homedir.Expand(root)); err == nil {
			roots = append(roots, real)
		}
	}
	return roots
}

// Resolve resolves p through every symlink and checks that the result lies
// under an allowed root. When p does not exist yet (a copy destination), its
// parent must exist and resolve under a root.
func (r Roots) Resolve(p string, mustExist bool) (string, error) {
	if p == "" {
		return "", fmt.Errorf("host_path is empty: %w", sandbox.ErrInvalid)
	}
	if !filepath.IsAbs(homedir.Expand(p)) {
		return "", fmt.Errorf("host_path %q must be absolute (the engine's working folder means nothing to you): %w", p, sandbox.ErrInvalid)
	}
	p = filepath.Clean(homedir.Expand(p))
	real, err := filepath.EvalSymlinks(p)
	if errors.Is(err, os.ErrNotExist) && !mustExist {
		parent, perr := filepath.EvalSymlinks(filepath.Dir(p))
		if perr != nil {
			return "", fmt.Errorf("host folder %s does not exist; create it first: %w", filepath.Dir(p), sandbox.ErrNotFound)
		}
		real, err = filepath.Join(parent, filepath.Base(p)), nil
	}
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("host path %s does not exist: %w", p, sandbox.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("host path %s: %w", p, err)
	}
	for _, root := range r.resolved() {
		if Within(root, real) {
			return real, nil
		}
	}
	return "", fmt.Errorf("host path %s is outside the folders Sandtray may touch (%s); put the files there, or ask the user to add a folder to host.allowed_roots in config.toml: %w",
		p, strings.Join(r, ", "), sandbox.ErrForbidden)
}

// Within reports whether p is root or lies below it.
func Within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Picked resolves dir, a folder a person picked in the app (so no allowed
// root binds it), through every symlink. It must be absolute; when it does
// not exist yet, its parent must.
func Picked(dir string) (string, error) {
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("folder %q must be an absolute path: %w", dir, sandbox.ErrInvalid)
	}
	real, err := filepath.EvalSymlinks(dir)
	if errors.Is(err, os.ErrNotExist) {
		parent, perr := filepath.EvalSymlinks(filepath.Dir(dir))
		if perr != nil {
			return "", fmt.Errorf("folder %s does not exist: %w", filepath.Dir(dir), sandbox.ErrNotFound)
		}
		real, err = filepath.Join(parent, filepath.Base(dir)), nil
	}
	if err != nil {
		return "", fmt.Errorf("folder %s: %w", dir, err)
	}
	return real, nil
}
