package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/sandtray/sandtray/engine/imageref"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Sandbox profiles (sandbox.profile).
const (
	// ProfileStandard is the default: the image's writable root, the
	// image's user unless sandbox.user says otherwise, network when asked
	// for and allowed.
	ProfileStandard = "standard"
	// ProfileStrict adds a read-only root, size-limited tmpfs for the
	// workdir and /tmp, a non-root user and no network.
	ProfileStrict = "strict"
)

// strictUser is who a strict sandbox runs as when sandbox.user names no one.
const strictUser = "1000:1000"

// Bounds of the limits no request can change.
const (
	minCPUsFloor = 0.01    // Docker's smallest CPU limit
	maxPids      = 1 << 16 // a sandbox never needs more processes
	minMemoryMB  = 16
)

// packageManagerCaps are the capabilities sandbox.cap_add may add back: those a
// root package manager needs (apt and dpkg running as root in the sandbox).
var packageManagerCaps = []string{"CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "SETUID", "SETGID"}

// Pull is the pull policy: which images create_sandbox may have the
// daemon pull when they are not on this machine.
type Pull struct {
	// Policy is "registries" (pull only from Registries) or "never".
	Policy string `toml:"policy"`
	// Registries are registry hosts images may come from; "docker.io" is
	// Docker Hub ("python:3.12" is docker.io/library/python:3.12).
	Registries []string `toml:"registries"`
	// MaxMB bounds what one pull may download, as the registry sizes the
	// image's (compressed) layers.
	MaxMB int64 `toml:"max_mb"`
}

// Pull policies (pull.policy).
const (
	PullRegistries = "registries"
	PullNever      = "never"
)

// defaultPull keeps images such as python:3.12 from Docker Hub working.
func defaultPull() Pull {
	return Pull{Policy: PullRegistries, Registries: []string{"docker.io"}, MaxMB: defaultPullMB}
}

// defaultPullMB is pull.max_mb's default: large enough for python:3.12
// (about 400 MB to download) and most language images.
const defaultPullMB = 4096

// defaultTmpfsMB is sandbox.tmpfs_mb's default.
const defaultTmpfsMB = 512

// validateSecurity checks the keys of this file, naming the first bad one.
func (c *Config) validateSecurity() error {
	l, s := c.Limits, c.Sandbox
	checks := []struct {
		bad      bool
		key, why string
	}{
		{l.MinCPUs < minCPUsFloor, "limits.min_cpus", fmt.Sprintf("must be at least %g (Docker's smallest CPU limit)", minCPUsFloor)},
		{l.CPUs < l.MinCPUs, "limits.cpus", "must be at least limits.min_cpus"},
		{l.Pids > maxPids, "limits.pids", fmt.Sprintf("must be at most %d", maxPids)},
		{s.Profile != ProfileStandard && s.Profile != ProfileStrict, "sandbox.profile", `must be "standard" or "strict"`},
		{s.Profile == ProfileStrict && s.Network != sandbox.NetworkNone, "sandbox.network", `must be "none" with sandbox.profile = "strict"`},
		{s.TmpfsMB < 16, "sandbox.tmpfs_mb", "must be at least 16"},
		{isRootUser(s.User), "sandbox.user", fmt.Sprintf(`%q is root; give a user that is not, such as "1000:1000", or "" for the image's own user`, s.User)},
		{c.Pull.Policy != PullRegistries && c.Pull.Policy != PullNever, "pull.policy", `must be "registries" or "never"`},
		{c.Pull.MaxMB < 1, "pull.max_mb", "must be at least 1"},
		{c.Pull.Policy == PullRegistries && len(c.Pull.Registries) == 0, "pull.registries", `must name at least one registry (such as "docker.io"), or set pull.policy = "never"`},
	}
	for _, ch := range checks {
		if ch.bad {
			return fmt.Errorf("%s %s: %w", ch.key, ch.why, sandbox.ErrInvalid)
		}
	}
	for _, cp := range s.CapAdd {
		if !slices.Contains(packageManagerCaps, strings.TrimPrefix(strings.ToUpper(cp), "CAP_")) {
			return fmt.Errorf("sandbox.cap_add %q is not allowed: only %s (what a root package manager needs) may be added back: %w",
				cp, strings.Join(packageManagerCaps, ", "), sandbox.ErrInvalid)
		}
	}
	for i, r := range c.Pull.Registries {
		if r == "" || strings.ContainsAny(r, "/ ") {
			return fmt.Errorf("pull.registries[%d] %q must be a registry host such as \"docker.io\" or \"ghcr.io\": %w", i, r, sandbox.ErrInvalid)
		}
	}
	return nil
}

// isRootUser reports whether a user spec names root outright: "root" or uid
// 0, with any group. A name that only the image maps to uid 0 is refused
// when the sandbox is created (docker.Client.Create).
func isRootUser(u string) bool {
	name, _, _ := strings.Cut(u, ":")
	return name == "root" || (name != "" && strings.Trim(name, "0") == "")
}

// SecureSpec applies the profile to spec and checks its limits against the
// config's bounds (the engine calls it for every new sandbox).
func (c *Config) SecureSpec(spec *sandbox.Spec) error {
	l := c.Limits
	spec.Profile = cmp.Or(c.Sandbox.Profile, ProfileStandard)
	if c.Sandbox.Profile == ProfileStrict {
		if spec.Network != sandbox.NetworkNone {
			return fmt.Errorf("network %q is not available: the user's config runs sandboxes in the strict profile (sandbox.profile = \"strict\"), which has no network; work offline: %w", spec.Network, sandbox.ErrForbidden)
		}
		spec.User = cmp.Or(spec.User, strictUser)
	}
	switch {
	case spec.CPUs < l.MinCPUs || spec.CPUs > l.MaxCPUs:
		return fmt.Errorf("cpus %g is out of range: use %g to %g (limits.min_cpus and limits.max_cpus in Sandtray's config): %w", spec.CPUs, l.MinCPUs, l.MaxCPUs, sandbox.ErrInvalid)
	case spec.MemoryMB < minMemoryMB || spec.MemoryMB > l.MaxMemoryMB:
		return fmt.Errorf("memory_mb %d is out of range: use %d to %d (limits.max_memory_mb in Sandtray's config): %w", spec.MemoryMB, minMemoryMB, l.MaxMemoryMB, sandbox.ErrInvalid)
	case spec.PidsLimit < 16 || spec.PidsLimit > maxPids:
		return fmt.Errorf("pids limit %d is out of range: use 16 to %d (limits.pids in Sandtray's config): %w", spec.PidsLimit, maxPids, sandbox.ErrInvalid)
	}
	return nil
}

// CheckPull says whether image ref, which is not on this machine, may be
// pulled: never while the user's config forbids the network (a registry name
// is a DNS query, a channel out), never under pull.policy = "never", and
// only from pull.registries.
func (c *Config) CheckPull(ref string) error {
	const fix = "pick an image that is on this machine (`docker images`), or ask the user to pull it"
	if c.Pull.Policy == PullNever {
		return fmt.Errorf("image %s is not on this machine, and the user's config says never to pull (pull.policy = \"never\"); %s: %w", ref, fix, sandbox.ErrForbidden)
	}
	registry, err := imageref.Registry(ref)
	if err != nil {
		return err
	}
	if !slices.Contains(c.Pull.Registries, registry) {
		return fmt.Errorf("image %s is not on this machine, and Sandtray pulls only from %s (pull.registries in the user's config), not from %s; %s, or to allow that registry: %w",
			ref, strings.Join(c.Pull.Registries, ", "), registry, fix, sandbox.ErrForbidden)
	}
	if !c.Sandbox.AllowNetwork {
		return fmt.Errorf("image %s is not on this machine, and Sandtray pulls nothing while the user's config forbids network access (sandbox.allow_network = false, the default); %s, or to set allow_network = true: %w", ref, fix, sandbox.ErrForbidden)
	}
	return nil
}
