package kubernetes

import (
	"context"
	"slices"
	"strings"

	"github.com/distribution/reference"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandtray/sandtray/engine/runtime"
)

// Images are the nodes': what their kubelets report having, and what they
// pull on demand (imagePullPolicy IfNotPresent). Sandtray builds, tags,
// commits and removes no image on a cluster.

// normalized is ref as a node names it: docker.io/library/python:3.12.
func normalized(ref string) string {
	n, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return ref
	}
	return reference.TagNameOnly(n).String()
}

// nodeImage finds ref in the nodes' image lists: its names there.
func (c *Client) nodeImage(ctx context.Context, ref string) ([]string, bool, error) {
	nodes, err := c.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, false, wrap("list nodes' images", err)
	}
	want := normalized(ref)
	for _, n := range nodes.Items {
		for _, img := range n.Status.Images {
			if slices.ContainsFunc(img.Names, func(name string) bool { return name == want || name == ref }) {
				return img.Names, true, nil
			}
		}
	}
	return nil, false, nil
}

// ImageExists reports whether a node has ref.
func (c *Client) ImageExists(ctx context.Context, ref string) (bool, error) {
	_, ok, err := c.nodeImage(ctx, ref)
	return ok, err
}

// PullImage leaves the pull to the kubelet, at the sandbox's start.
func (c *Client) PullImage(ctx context.Context, ref string, progress func(runtime.PullProgress)) error {
	if progress != nil {
		progress(runtime.PullProgress{Status: "the node pulls " + ref + " when a sandbox starts"})
	}
	return nil
}

// InspectImage is what a node tells of ref: its names and digest. The
// image's configuration (env, user, workdir) is not in the API.
func (c *Client) InspectImage(ctx context.Context, ref string) (runtime.Image, error) {
	names, ok, err := c.nodeImage(ctx, ref)
	if err != nil {
		return runtime.Image{}, err
	}
	img := runtime.Image{ID: ref, RepoTags: []string{ref}}
	if !ok {
		return img, nil // the kubelet pulls it
	}
	for _, n := range names {
		if _, digest, ok := strings.Cut(n, "@"); ok {
			img.ID = digest
			img.RepoDigests = append(img.RepoDigests, n)
		}
	}
	return img, nil
}

func (c *Client) ImageDetails(ctx context.Context, ref string) (runtime.ImageDetails, error) {
	img, err := c.InspectImage(ctx, ref)
	return runtime.ImageDetails{ID: img.ID}, err
}

func (c *Client) ImageSize(ctx context.Context, ref string) (int64, error) {
	nodes, err := c.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, wrap("list nodes' images", err)
	}
	want := normalized(ref)
	for _, n := range nodes.Items {
		for _, img := range n.Status.Images {
			if slices.Contains(img.Names, want) {
				return img.SizeBytes, nil
			}
		}
	}
	return 0, nil
}

// ImageEvents streams nothing until ctx ends: the API has no image events.
func (c *Client) ImageEvents(ctx context.Context) (<-chan runtime.ImageEvent, <-chan error) {
	events, errs := make(chan runtime.ImageEvent), make(chan error, 1)
	go func() {
		<-ctx.Done()
		errs <- ctx.Err()
		close(events)
		close(errs)
	}()
	return events, errs
}

// ImagesLabeled lists none: Sandtray commits no image on a cluster.
func (c *Client) ImagesLabeled(ctx context.Context, labels map[string]string) ([]runtime.LabeledImage, error) {
	return nil, nil
}

func (c *Client) TagImage(ctx context.Context, src, ref string) error {
	return unsupported("tag image "+src, "images are the nodes' and their registries'")
}

func (c *Client) RemoveImage(ctx context.Context, ref string) error {
	return unsupported("remove image "+ref, "images are the nodes' and their registries'")
}

func (c *Client) RemoveUntagged(ctx context.Context, id string) (bool, error) {
	return false, nil
}

// Not here, so the engine offers none of what needs them
// (runtime.CapabilitiesOf): Builder (Sandtray builds images with Docker),
// Committer and Pauser (a Pod's writable layer is the node's, which no CSI
// snapshot covers, and the API cannot freeze a Pod).
