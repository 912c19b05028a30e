package pool

import (
	"github.com/sandtray/sandtray/engine/sandbox"
)

// API is what this part gives the Engine's callers: the warm pool's state.
// Package engine promotes these methods, and only these, onto
// *engine.Engine; the rest of the part's exported methods are the engine's
// centre's to call.
type API interface {
	PoolReady() (ready, size int)
	PoolStatus() []sandbox.PoolImage
}
