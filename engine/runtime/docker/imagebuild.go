package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/jsonstream"
	"github.com/moby/moby/client"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// What the sandbox image's builder (engine/internal/imagebuild) asks of
// Docker: the daemon's platform, an image made from a root filesystem's
// tar, one build step run in a container of it, and that container's files
// read back. None of it makes a sandbox: a build container is not hardened
// like one (it runs Debian's own maintainer scripts as root, with Docker's
// default capabilities, and without a network).

// Platform returns the daemon's OS and architecture as Docker names them
// ("linux", "x86_64" or "aarch64"): the image must be made for the machine
// the daemon runs on, which is not this one for a remote engine or a VM.
func (c *Client) Platform(ctx context.Context) (osName, arch string, err error) {
	v, err := c.api.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return "", "", wrap("get Docker version", err)
	}
	return v.Os, v.Arch, nil
}

// ImportImage makes an image from rootfs, a tar of a whole root filesystem,
// as `docker import` does, with the Dockerfile instructions in changes
// ("WORKDIR /workspace", "ENV …", "CMD …") applied to its config, and
// tags it ref ("" for none). It returns the new image's id.
func (c *Client) ImportImage(ctx context.Context, rootfs io.Reader, ref string, changes []string, message string) (string, error) {
	op := "import image " + cmpOrString(ref, "(untagged)")
	res, err := c.api.ImageImport(ctx, client.ImageImportSource{Source: rootfs, SourceName: "-"}, ref,
		client.ImageImportOptions{Changes: changes, Message: message})
	if err != nil {
		return "", wrap(op, err)
	}
	defer res.Close()
	// The reply is a stream of JSON messages; the last carries the id
	// ({"status":"sha256:…"}), an error one the daemon's complaint.
	id := ""
	if err := readMessages(op, res, func(msg jsonstream.Message) {
		if s := strings.TrimSpace(msg.Status); strings.HasPrefix(s, "sha256:") {
			id = s
		}
	}); err != nil {
		return "", err
	}
	if id == "" && ref != "" {
		return c.ImageID(ctx, ref)
	}
	if id == "" {
		return "", fmt.Errorf("%s: the daemon named no image: %w", op, sandbox.ErrUnavailable)
	}
	return id, nil
}

// RunBuildStep creates and starts a container for step, copies its output
// to step.Output until it exits, and returns the container's id (stopped,
// not removed: the caller reads its files with ExportContainer, then
// removes it with Remove) and the command's exit code. On any failure the
// container is removed before RunBuildStep returns.
func (c *Client) RunBuildStep(ctx context.Context, step runtime.BuildStep) (id string, exitCode int, err error) {
	op := "run a build step in image " + step.Image
	init := true
	res, err := c.api.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config: &container.Config{Image: step.Image, Cmd: step.Cmd, Env: step.Env, Labels: step.Labels,
			Entrypoint: []string{}, User: "0:0", WorkingDir: "/"},
		HostConfig: &container.HostConfig{NetworkMode: "none", Init: &init, LogConfig: container.LogConfig{Type: "json-file"}},
	})
	if err != nil {
		return "", 0, wrap(op, err)
	}
	id = res.ID
	defer func() {
		if err != nil {
			c.Remove(context.WithoutCancel(ctx), id)
			id = ""
		}
	}()
	wait := c.api.ContainerWait(ctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})
	if _, err := c.api.ContainerStart(ctx, id, client.ContainerStartOptions{}); err != nil {
		return id, 0, wrap(op, err)
	}
	logs, err := c.api.ContainerLogs(ctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Follow: true})
	if err != nil {
		return id, 0, wrap(op, err)
	}
	out := orDiscard(step.Output)
	_, copyErr := stdcopy.StdCopy(out, out, logs)
	logs.Close()
	select {
	case r := <-wait.Result:
		if r.Error != nil && r.Error.Message != "" {
			return id, 0, fmt.Errorf("%s: %w (%s)", op, sandbox.ErrUnavailable, r.Error.Message)
		}
		return id, int(r.StatusCode), nil
	case err := <-wait.Error:
		return id, 0, wrap(op, errors.Join(err, copyErr))
	case <-ctx.Done():
		return id, 0, wrap(op, ctx.Err())
	}
}

// ExportContainer streams a container's whole filesystem as a tar, as
// `docker export` does. The caller closes it.
func (c *Client) ExportContainer(ctx context.Context, id string) (io.ReadCloser, error) {
	r, err := c.api.ContainerExport(ctx, id, client.ContainerExportOptions{})
	if err != nil {
		return nil, wrap("export container "+id, err)
	}
	return r, nil
}

func cmpOrString(v, fallback string) string {
	if v == "" {
		return fallback
	}
	return v
}

// ImageDetails reports a local image; one that is not present fails with
// sandbox.ErrNotFound.
func (c *Client) ImageDetails(ctx context.Context, ref string) (runtime.ImageDetails, error) {
	res, err := c.api.ImageInspect(ctx, ref)
	if err != nil {
		return runtime.ImageDetails{}, wrap("inspect image "+ref, err)
	}
	d := runtime.ImageDetails{ID: res.ID, Size: res.Size, Comment: res.Comment}
	d.Created, _ = time.Parse(time.RFC3339Nano, res.Created)
	return d, nil
}
