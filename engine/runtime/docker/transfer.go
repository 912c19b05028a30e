package docker

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/sandtray/sandtray/engine/runtime"

	"github.com/distribution/reference"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// ImageExists reports whether the image ref is present locally. It never
// contacts a registry.
func (c *Client) ImageExists(ctx context.Context, ref string) (bool, error) {
	_, err := c.ImageID(ctx, ref)
	if errors.Is(err, sandbox.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// ImageID returns the local image's id ("sha256:..."); an image that is not
// present locally fails with sandbox.ErrNotFound.
func (c *Client) ImageID(ctx context.Context, ref string) (string, error) {
	res, err := c.api.ImageInspect(ctx, ref)
	if err != nil {
		return "", wrap("inspect image "+ref, err)
	}
	return res.ID, nil
}

// PullImage pulls ref from its registry, calling progress (if not nil) for
// every status line Docker streams. It does not return until the pull ends or
// ctx is done. A malformed reference fails with sandbox.ErrInvalid. Any
// failure the daemon reports (unknown image, registry unreachable, access
// denied) fails with sandbox.ErrNotFound naming the image, since to the user
// all of them mean "this image cannot be had". A daemon that cannot be
// reached, or ctx's deadline passing, is sandbox.ErrUnavailable instead.
func (c *Client) PullImage(ctx context.Context, ref string, progress func(runtime.PullProgress)) error {
	op := "pull image " + ref
	if _, err := reference.ParseNormalizedNamed(ref); err != nil {
		return fmt.Errorf("%s: %w (%w)", op, sandbox.ErrInvalid, err)
	}
	resp, err := c.api.ImagePull(ctx, ref, client.ImagePullOptions{})
	if err != nil {
		return pullError(op, err)
	}
	defer resp.Close()
	sizes := pullSizes{limit: c.pullLimit.Load()}
	for msg, err := range resp.JSONMessages(ctx) {
		if err != nil {
			return pullError(op, err)
		}
		if msg.Error != nil {
			return fmt.Errorf("%s: %w (%w)", op, sandbox.ErrNotFound, msg.Error)
		}
		if msg.Progress != nil {
			if err := sizes.add(msg.ID, msg.Progress.Total); err != nil {
				return fmt.Errorf("%s: %w", op, err) // returning closes the stream, which stops the pull
			}
		}
		if progress == nil {
			continue
		}
		p := runtime.PullProgress{Status: msg.Status, ID: msg.ID}
		if msg.Progress != nil {
			p.Current, p.Total = msg.Progress.Current, msg.Progress.Total
		}
		progress(p)
	}
	return nil
}

// pullError classifies a pull failure: the daemon's own complaints mean the
// image cannot be had (ErrNotFound); transport and ctx failures keep their
// usual kinds.
func pullError(op string, err error) error {
	kind := kindOf(err)
	if kind == sandbox.ErrUnavailable || errors.Is(err, context.Canceled) {
		return wrap(op, err)
	}
	return fmt.Errorf("%s: %w (%w)", op, sandbox.ErrNotFound, err)
}

// StatPath describes a path inside a container, running or not, without
// following a final symlink (LinkTarget names it). A missing path fails with
// sandbox.ErrNotFound.
func (c *Client) StatPath(ctx context.Context, id, path string) (runtime.PathStat, error) {
	if on, err := c.onTmpfs(ctx, id, path); err != nil || on {
		if err != nil {
			return runtime.PathStat{}, err
		}
		return c.execStat(ctx, id, path)
	}
	res, err := c.api.ContainerStatPath(ctx, id, client.ContainerStatPathOptions{Path: path})
	if err != nil {
		return runtime.PathStat{}, wrap(fmt.Sprintf("stat %s in container %s", path, id), err)
	}
	return pathStat(res.Stat), nil
}

// On a container's tmpfs mounts StatPath, CopyTo and CopyFrom go through an
// exec instead (see tmpfsfiles.go): CopyTo then needs the container running
// and extracts as its user, whatever owners the headers name.

// CopyTo extracts a tar archive into the existing directory dstDir of a
// container. Entries get the owner, mode and mtime in their tar headers, so
// the caller decides who owns what it writes; an existing directory is never
// replaced by a file or the other way round. A missing dstDir fails with
// sandbox.ErrNotFound.
func (c *Client) CopyTo(ctx context.Context, id, dstDir string, tarStream io.Reader) error {
	if on, err := c.onTmpfs(ctx, id, dstDir); err != nil || on {
		if err != nil {
			return err
		}
		return c.execCopyTo(ctx, id, dstDir, tarStream)
	}
	_, err := c.api.CopyToContainer(ctx, id, client.CopyToContainerOptions{
		DestinationPath: dstDir,
		Content:         tarStream,
	})
	return wrap(fmt.Sprintf("copy into %s in container %s", dstDir, id), err)
}

// CopyFrom returns a tar archive of path (a file, or a directory with its
// contents) and the path's stat. The archive's top-level entry is named after
// path's base name. The caller must close the reader; it stops working when
// ctx is done. A missing path fails with sandbox.ErrNotFound.
func (c *Client) CopyFrom(ctx context.Context, id, path string) (io.ReadCloser, runtime.PathStat, error) {
	if on, err := c.onTmpfs(ctx, id, path); err != nil || on {
		if err != nil {
			return nil, runtime.PathStat{}, err
		}
		return c.execCopyFrom(ctx, id, path)
	}
	res, err := c.api.CopyFromContainer(ctx, id, client.CopyFromContainerOptions{SourcePath: path})
	if err != nil {
		return nil, runtime.PathStat{}, wrap(fmt.Sprintf("copy %s from container %s", path, id), err)
	}
	return res.Content, pathStat(res.Stat), nil
}

func pathStat(s container.PathStat) runtime.PathStat {
	return runtime.PathStat{
		Name:       s.Name,
		Size:       s.Size,
		Mode:       uint32(s.Mode),
		ModTime:    s.Mtime,
		LinkTarget: s.LinkTarget,
	}
}
