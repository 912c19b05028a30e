package pool

import (
	"cmp"
	"slices"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Status reports what the pool holds and wants, image by image, configured
// images first, then by name. A nil pool holds nothing.
func (p *Pool) Status() []sandbox.PoolImage {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	alloc := p.allocate(p.now())
	out := make([]sandbox.PoolImage, 0, len(p.images))
	for img, s := range p.images {
		out = append(out, sandbox.PoolImage{Image: img, Ready: len(s.ready), Filling: s.filling, Want: alloc[img],
			Configured: s.configured, LastUsed: lastUse(s), SpareBytes: s.memory, Error: s.lastErr})
	}
	slices.SortFunc(out, func(a, b sandbox.PoolImage) int {
		if a.Configured != b.Configured {
			if a.Configured {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Image, b.Image)
	})
	return out
}
