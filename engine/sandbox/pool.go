package sandbox

import "time"

// PoolImage is what the warm pool holds for one image: spares ready and
// being made, how many it wants now (its share of the budget), what one
// spare uses, and why it cannot make them, if it cannot.
type PoolImage struct {
	Image      string    `json:"image"`
	Ready      int       `json:"ready"`
	Filling    int       `json:"filling"`
	Want       int       `json:"want"`
	Configured bool      `json:"configured"` // in pool.images: kept whether used or not
	LastUsed   time.Time `json:"last_used,omitzero"`
	// SpareBytes is the memory one spare was measured to use (0: not yet).
	SpareBytes uint64 `json:"spare_bytes,omitempty"`
	Error      string `json:"error,omitempty"`
}
