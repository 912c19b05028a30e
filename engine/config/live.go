package config

import (
	"slices"
	"strings"
)

// liveKeys are the config keys (or whole sections) the engine's
// Reconfigure applies to the running engine: each is read afresh when it is used (a new sandbox's
// limits and defaults, the default image, copies' host folders, the reaper's
// idle times), or its part is replaced (the warm pool, the egress gate's
// rules). Every other key is read once at start and waits for a restart;
// a key not listed here is a restart's, so a new key is never claimed to
// apply when it does not.
var liveKeys = []string{
	"default_image", "images",
	"limits.memory_mb", "limits.max_memory_mb", "limits.cpus", "limits.min_cpus", "limits.max_cpus",
	"limits.pids", "limits.exec_timeout", "limits.max_exec_timeout", "limits.disk_mb",
	"limits.read_file_bytes", "limits.max_sandboxes",
	"limits.max_snapshots", "limits.max_forks", "limits.max_snapshot_mb", "limits.max_committed_mb", // read at each call (engine/internal/snapshot)
	"sandbox", "host", "pool",
	"egress.allow", "egress.deny", "egress.ask",
}

// AppliesLive reports whether a change to the config key (as config.toml
// spells it, e.g. "limits.memory_mb") takes effect in a running engine
// through the engine's Reconfigure; false means it waits for a restart.
func AppliesLive(key string) bool {
	return slices.ContainsFunc(liveKeys, func(k string) bool { return key == k || strings.HasPrefix(key, k+".") })
}
