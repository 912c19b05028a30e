package engine

import "github.com/sandtray/sandtray/engine/internal/hostfs"

// hostPath resolves a host path a model named under the allowed roots (see
// hostfs.Roots.Resolve).
func (e *Engine) hostPath(p string, mustExist bool) (string, error) {
	return hostfs.Roots(e.cfg.Host.AllowedRoots).Resolve(p, mustExist)
}
