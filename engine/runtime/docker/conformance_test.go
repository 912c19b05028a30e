package docker_test

import (
	"testing"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/runtime/runtimetest"
	"github.com/sandtray/sandtray/test/dockertest"
)

// TestConformance: the Docker runtime passes the conformance suite on the
// real daemon, with the test image, under labels of its own whose
// containers are removed, committing to a repository that is removed.
func TestConformance(t *testing.T) {
	repo, _ := dockertest.ImageRepo(t) // before Labels: its cleanup runs after theirs
	labels := dockertest.Labels(t)
	image := dockertest.Image(t)
	runtimetest.Run(t, func(t *testing.T) runtime.Runtime { return dockertest.Client(t) },
		runtimetest.Options{Image: image, Labels: labels, ImageRepo: repo})
}
