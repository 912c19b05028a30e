package engine

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

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
	Adjusted *adjusted `json:"adjusted,omitempty"` // limits and env set at the hand-out (pool.go)
	// Ports are the sandbox's port forwards, restored at start-up when it is persistent.
	Ports []sandbox.PortForward `json:"ports,omitempty"`
}

// stateStore reads and writes boxState files and activity logs atomically
// enough that a crash loses at most the entry being written.
type stateStore struct{ dir string }

func newStateStore(dir string) (*stateStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	return &stateStore{dir: dir}, nil
}

func (s *stateStore) statePath(id string) string { return filepath.Join(s.dir, id+".json") }
func (s *stateStore) activityPath(id string) string {
	return filepath.Join(s.dir, id+".activity.jsonl")
}

// load returns the saved state, and false when there is none.
func (s *stateStore) load(id string) (boxState, bool, error) {
	b, err := os.ReadFile(s.statePath(id))
	if errors.Is(err, os.ErrNotExist) {
		return boxState{}, false, nil
	}
	if err != nil {
		return boxState{}, false, err
	}
	var st boxState
	if err := json.Unmarshal(b, &st); err != nil {
		return boxState{}, false, fmt.Errorf("state of %s: %w", id, err)
	}
	return st, true, nil
}

// save writes the state through a synced temp file and a rename, so a reader
// sees the old state or the new one, never half of either.
func (s *stateStore) save(id string, st boxState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return writeFileAtomic(s.statePath(id), b, 0o600)
}

func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // no-op after a successful rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// activityFileMax is the size at which a sandbox's activity log is rotated:
// the full file becomes the one older file kept (.1), so a sandbox's logs
// take at most twice this on disk.
const activityFileMax = 16 << 20

// appendActivity adds one entry to the sandbox's JSON-lines activity log,
// rotating it first when it has reached activityFileMax.
func (s *stateStore) appendActivity(id string, a sandbox.Activity) error {
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	path := s.activityPath(id)
	if st, err := os.Stat(path); err == nil && st.Size()+int64(len(b)) > activityFileMax {
		if err := os.Rename(path, path+".1"); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(s.activityPath(id), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(append(b, '\n'))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// loadActivity returns the last max entries of the activity log; a torn last
// line (a crash mid-write) is skipped.
func (s *stateStore) loadActivity(id string, max int) ([]sandbox.Activity, error) {
	var out []sandbox.Activity
	for _, p := range []string{s.activityPath(id) + ".1", s.activityPath(id)} { // oldest first
		var err error
		if out, err = readActivity(p, out, max); err != nil {
			return out, err
		}
	}
	if len(out) > max {
		out = out[len(out)-max:]
	}
	return trimActivity(out), nil
}

// readActivity appends the entries of one JSON-lines file to out, keeping
// the last max or so.
func readActivity(path string, out []sandbox.Activity, max int) ([]sandbox.Activity, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return out, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var a sandbox.Activity
		if json.Unmarshal(sc.Bytes(), &a) != nil {
			continue
		}
		out = append(out, a)
		if len(out) > 2*max {
			out = append(out[:0], out[len(out)-max:]...)
		}
	}
	return out, sc.Err()
}

// remove deletes everything stored about a sandbox.
func (s *stateStore) remove(id string) {
	os.Remove(s.statePath(id))
	os.Remove(s.activityPath(id))
	os.Remove(s.activityPath(id) + ".1")
}
