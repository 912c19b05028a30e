package engine

import "github.com/sandtray/sandtray/engine/internal/statedir"

// boxState is what changes about a sandbox over its life, kept in its
// state file (engine/internal/statedir, which also holds the engine's
// identity and the coalesced saves of last-use times).
type boxState = statedir.State
