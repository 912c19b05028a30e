package ui

import (
	"fmt"
	"strings"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// PoolText is the status bar's account of the warm pool: the spares ready
// of each image it keeps, against its share ("2/2"), "" with no pool.
func PoolText(pool []sandbox.PoolImage) string {
	var parts []string
	ready := 0
	for _, p := range pool {
		if p.Want == 0 && p.Ready == 0 {
			continue
		}
		ready += p.Ready
		parts = append(parts, fmt.Sprintf("%s %d/%d", shortImage(p.Image), p.Ready, p.Want))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("Warm: %d ready (%s)", ready, strings.Join(parts, ", "))
}

// shortImage drops a registry host and the ":latest" tag, which say little.
func shortImage(ref string) string {
	ref = strings.TrimSuffix(ref, ":latest")
	if i := strings.Index(ref, "/"); i >= 0 && strings.ContainsAny(ref[:i], ".:") {
		ref = ref[i+1:]
	}
	return ref
}
