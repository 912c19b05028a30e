package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// allowedRoots returns the configured host roots resolved through symlinks.
// Roots that do not exist are left out: nothing can be under them.
func (e *Engine) allowedRoots() []string {
	var roots []string
	for _, r := range e.cfg.Host.AllowedRoots {
		if real, err := filepath.EvalSymlinks(expandHome(r)); err == nil {
			roots = append(roots, real)
		}
	}
	return roots
}

// hostPath resolves p through every symlink and checks that the result lies
// under an allowed root. When p does not exist yet (a copy destination), its
// parent must exist and resolve under a root.
func (e *Engine) hostPath(p string, mustExist bool) (string, error) {
	if p == "" {
		return "", fmt.Errorf("host_path is empty: %w", sandbox.ErrInvalid)
	}
	if !filepath.IsAbs(expandHome(p)) {
		return "", fmt.Errorf("host_path %q must be absolute (the engine's working folder means nothing to you): %w", p, sandbox.ErrInvalid)
	}
	p = filepath.Clean(expandHome(p))
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
	for _, root := range e.allowedRoots() {
		if within(root, real) {
			return real, nil
		}
	}
	return "", fmt.Errorf("host path %s is outside the folders Sandtray may touch (%s); put the files there, or ask the user to add a folder to host.allowed_roots in config.toml: %w",
		p, strings.Join(e.cfg.Host.AllowedRoots, ", "), sandbox.ErrForbidden)
}

// within reports whether p is root or lies below it.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
