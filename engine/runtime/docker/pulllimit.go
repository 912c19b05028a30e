package docker

import (
	"fmt"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// SetPullLimit bounds the bytes one PullImage may download, as the layers'
// sizes in the registry (compressed) add up; 0 removes the bound. A pull
// that would exceed it stops as soon as the sizes reported so far do, with
// sandbox.ErrForbidden, before the layers are all downloaded: a model that
// names a huge image cannot fill the disk with it.
func (c *Client) SetPullLimit(bytes int64) { c.pullLimit.Store(max(bytes, 0)) }

// pullSizes adds up the sizes of a pull's layers as Docker reports them.
type pullSizes struct {
	limit  int64
	layers map[string]int64
	total  int64
}

// add records layer id's size and fails once the total passes the limit.
func (p *pullSizes) add(id string, size int64) error {
	if p.limit <= 0 || id == "" || size <= 0 {
		return nil
	}
	if p.layers == nil {
		p.layers = map[string]int64{}
	}
	p.total += size - p.layers[id]
	p.layers[id] = size
	if p.total > p.limit {
		return fmt.Errorf("the image's layers add up to at least %d MB, over the pull limit of %d MB (pull.max_mb in Sandtray's config): %w",
			p.total>>20, p.limit>>20, sandbox.ErrForbidden)
	}
	return nil
}
