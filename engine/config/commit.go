package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sandtray/sandtray/engine/imageref"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Commit is the [commit] section: where commit_sandbox and the app's
// Commit… dialog may write images.
type Commit struct {
	// Namespace prefixes every committed image's name ("foo:v1" is saved
	// as "sandtray-local/foo:v1"), so a commit never takes a name that the
	// user's own images or Docker's pulls use.
	Namespace string `toml:"namespace"`
}

const defaultCommitNamespace = "sandtray-local/"

// check names the key when the namespace is not a repository prefix of this
// machine's (lowercase path components ending in "/", no registry host).
func (c Commit) check() error {
	ns := c.Namespace
	tag, err := imageref.Tag(ns + "x:1")
	reg, _ := imageref.Registry(ns + "x")
	// "library/x" is Docker Hub's official "x": the prefix must survive.
	if !strings.HasSuffix(ns, "/") || err != nil || reg != "docker.io" || tag != ns+"x:1" {
		return fmt.Errorf(`commit.namespace %q must be a repository prefix ending in "/" with no registry host, such as %q: %w`,
			ns, defaultCommitNamespace, sandbox.ErrInvalid)
	}
	return nil
}

// ConfiguredImages are the images sandboxes start from by configuration:
// the default, each language's and each pool image.
func (c *Config) ConfiguredImages() []string {
	imgs := append([]string{c.DefaultImage}, c.Pool.Images...)
	return slices.Compact(slices.Sorted(slices.Values(append(imgs, slices.Collect(maps.Values(c.Images))...))))
}
