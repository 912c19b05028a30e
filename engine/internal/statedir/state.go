package statedir

import (
	"log/slog"
	"time"

	"github.com/sandtray/sandtray/engine/internal/pool"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// State is what changes about a sandbox over its life. Docker labels are
// immutable, so it lives in the state dir, one JSON file per container id.
type State struct {
	Persistent bool          `json:"persistent"`
	Owner      sandbox.Owner `json:"owner"`
	LastUsed   time.Time     `json:"last_used"`
	// Packages is the manifest of install_packages: what was asked for, with
	// the exact version installed, one entry per manager and name.
	Packages []sandbox.Package `json:"packages,omitempty"`
	// Created and Language are set for a sandbox taken from the warm pool,
	// whose labels were written when it entered the pool (see
	// engine/internal/pool).
	Created  time.Time `json:"created,omitzero"`
	Language string    `json:"language,omitempty"`
	// Adjusted is the limits and env set at the hand-out (engine/internal/pool).
	Adjusted *pool.Adjusted `json:"adjusted,omitempty"`
	// Ports are the sandbox's port forwards, restored at start-up when it is persistent.
	Ports []sandbox.PortForward `json:"ports,omitempty"`
	// Egress is the rules the user gave the sandbox on the egress gate
	// (approvals "always for this sandbox").
	Egress sandbox.EgressRules `json:"egress,omitzero"`
	// InitRun is when Docker started the run of the container whose PID 1
	// is Sandtray's own init (its first kernel's launcher, started from the
	// image's files at create); zero for every other container (see
	// engine/pid1.go).
	InitRun time.Time `json:"init_run,omitzero"`
	// Inherited is what a fork's image carries over its base image: files
	// its sandbox holds from the start, counted against limits.disk_mb with
	// what it writes (F59).
	Inherited int64 `json:"inherited,omitempty"`
}

// LoadState returns the saved state of sandbox id, and false when there is
// none.
func (s *Store) LoadState(id string) (State, bool, error) {
	var st State
	ok, err := s.Load(id, &st)
	return st, ok, err
}

// SaveStateOrWarn saves st and logs a failure: the state on disk is only
// stale then (the sandbox itself is unharmed).
func (s *Store) SaveStateOrWarn(log *slog.Logger, id string, st State) {
	if err := s.Save(id, st); err != nil {
		log.Warn("save sandbox state", "id", sandbox.ShortID(id), "err", err)
	}
}
