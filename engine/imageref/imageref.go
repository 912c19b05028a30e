// Package imageref parses image references the way Docker does: a tag's
// familiar form and the registry a name would be pulled from. It needs no
// runtime, so the config and the engine's policies use it without the
// Docker SDK.
package imageref

import (
	"fmt"

	"github.com/distribution/reference"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Tag checks that ref names an image tag ("repo", "repo:tag",
// "registry/repo:tag") and returns it in its familiar form with the tag
// spelled out ("ubuntu" becomes "ubuntu:latest"). A digest, an image id or a
// malformed name fails with sandbox.ErrInvalid.
func Tag(ref string) (string, error) {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return "", fmt.Errorf("image name %q: %w (%w)", ref, sandbox.ErrInvalid, err)
	}
	if _, ok := named.(reference.Digested); ok {
		return "", fmt.Errorf("image name %q has a digest; a tag cannot: %w", ref, sandbox.ErrInvalid)
	}
	return reference.FamiliarString(reference.TagNameOnly(named)), nil
}

// Registry returns the registry host an image reference would be pulled
// from: "docker.io" for Docker Hub names such as "python:3.12", else the
// reference's domain ("ghcr.io", "localhost:5000"). A malformed reference
// fails with sandbox.ErrInvalid.
func Registry(ref string) (string, error) {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return "", fmt.Errorf("image name %q: %w (%w)", ref, sandbox.ErrInvalid, err)
	}
	return reference.Domain(named), nil
}
