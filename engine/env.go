package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// hostSide are the env names a caller may not give a sandbox or a command
// (docs/security.md F35), by prefix, and why. Where NVIDIA's runtime is the
// daemon's default, NVIDIA_VISIBLE_DEVICES alone hands a container GPUs,
// whatever gpu.allow says; the toolkit's hooks run on the host side of a
// container's start and read LD_* as they load (CVE-2025-23266). Names
// are compared without regard to case, as Docker does on Windows.
var hostSide = []struct{ prefix, why string }{
	{"NVIDIA_", "NVIDIA_* variables choose the GPUs the NVIDIA Container Toolkit gives a container, past gpu.allow and gpu.max"},
	{"LD_", "LD_* variables change what the NVIDIA Container Toolkit's hooks load as they run on the host (CVE-2025-23266)"},
}

// checkEnv refuses env names that are not valid, or that reach the host's
// GPU toolkit; tool says where they came from (create_sandbox, execute_command).
func checkEnv(tool string, env map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if !validEnvKey.MatchString(k) {
			return fmt.Errorf("env name %q is not valid: use letters, digits and '_', not starting with a digit: %w", k, sandbox.ErrInvalid)
		}
		for _, h := range hostSide {
			if strings.HasPrefix(strings.ToUpper(k), h.prefix) {
				return fmt.Errorf("%s's env may not set %s: %s, so Sandtray does not pass them. Ask for GPUs with create_sandbox's gpus; "+
					"to give a program of yours %s, set it in the command itself (export %s=...): %w", tool, k, h.why, k, k, sandbox.ErrForbidden)
			}
		}
	}
	return nil
}
