package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"maps"
	"slices"
)

// ShortID is a container id cut to the 12 characters Docker shows.
func ShortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// RandomHex returns n random bytes as 2n hex digits: generated names, call
// markers, job ids.
func RandomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// EnvList renders env as Docker's NAME=value list, sorted by name.
func EnvList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}
