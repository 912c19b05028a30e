package engine

import (
	"log/slog"
	"time"

	"github.com/sandtray/sandtray/engine/internal/pool"
	"github.com/sandtray/sandtray/engine/internal/statedir"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// boxState is what changes about a sandbox over its life. Docker labels are
// immutable, so it lives in the state dir, one JSON file per container id.
type boxState struct {
	Persistent bool          `json:"persistent"`
	Owner      sandbox.Owner `json:"owner"`
	LastUsed   time.Time     `json:"last_used"`
	// Packages is the manifest of install_packages: what was asked for, with
	// the exact version installed, one entry per manager and name.
	Packages []sandbox.Package `json:"packages,omitempty"`
	// Created and Language are set for a sandbox taken from the warm pool,
	// whose labels were written when it entered the pool (see pool.go).
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
	// image's files at create); zero for every other container (see pid1.go).
	InitRun time.Time `json:"init_run,omitzero"`
	// Inherited is what a fork's image carries over its base image: files
	// its sandbox holds from the start, counted against limits.disk_mb with
	// what it writes (F59).
	Inherited int64 `json:"inherited,omitempty"`
}

// stateStore is the state dir (engine/internal/statedir) holding boxStates.
type stateStore struct{ *statedir.Store }

func newStateStore(dir string) (*stateStore, error) {
	s, err := statedir.New(dir)
	if err != nil {
		return nil, err
	}
	return &stateStore{s}, nil
}

// load returns the saved state, and false when there is none.
func (s *stateStore) load(id string) (boxState, bool, error) {
	var st boxState
	ok, err := s.Load(id, &st)
	return st, ok, err
}

func (s *stateStore) save(id string, st boxState) error { return s.Save(id, st) }

// saveOrWarn saves st and logs a failure: the state on disk is only
// stale then (the sandbox itself is unharmed).
func (s *stateStore) saveOrWarn(log *slog.Logger, id string, st boxState) {
	if err := s.save(id, st); err != nil {
		log.Warn("save sandbox state", "id", sandbox.ShortID(id), "err", err)
	}
}

// loadActivity returns the last max entries of the activity log, trimmed
// to what a sandbox keeps in memory.
func (s *stateStore) loadActivity(id string, max int) ([]sandbox.Activity, error) {
	acts, err := s.LoadActivity(id, max)
	return trimActivity(acts), err
}
