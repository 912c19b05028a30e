// Package statedir is Sandtray's state dir: one JSON state file (what
// changes about a sandbox over its life, State) and one JSON-lines activity
// log (rotated once) per sandbox, written so that a crash loses at most the
// entry being written; the coalesced saves of last-use times that keep
// calls off the disk (LastUse); the engine's identity, which derives from
// the state dir (Identity), and the containers it owns by it (ListOwned);
// and the lock that keeps a state dir to one running engine (Lock).
package statedir

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/atomicfile"
)

// Store reads and writes each sandbox's state file and activity log
// atomically enough that a crash loses at most the entry being written.
type Store struct{ dir string }

// New returns the store in dir, creating it.
func New(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	return &Store{dir: dir}, nil
}

func (s *Store) statePath(id string) string { return filepath.Join(s.dir, id+".json") }
func (s *Store) activityPath(id string) string {
	return filepath.Join(s.dir, id+".activity.jsonl")
}

// Load decodes the saved state of sandbox id into st, and reports false
// when there is none.
func (s *Store) Load(id string, st any) (bool, error) {
	b, err := os.ReadFile(s.statePath(id))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, st); err != nil {
		return false, fmt.Errorf("state of %s: %w", id, err)
	}
	return true, nil
}

// Save writes the state of sandbox id through a synced temp file and a
// rename, so a reader sees the old state or the new one, never half of
// either.
func (s *Store) Save(id string, st any) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return atomicfile.Write(s.statePath(id), b, 0o600)
}

// activityFileMax is the size at which a sandbox's activity log is rotated:
// the full file becomes the one older file kept (.1), so a sandbox's logs
// take at most twice this on disk.
const activityFileMax = 16 << 20

// AppendActivity adds one entry to the sandbox's JSON-lines activity log,
// rotating it first when it has reached activityFileMax.
func (s *Store) AppendActivity(id string, a sandbox.Activity) error {
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

// LoadActivity returns the last max entries of the activity log; a torn last
// line (a crash mid-write) is skipped.
func (s *Store) LoadActivity(id string, max int) ([]sandbox.Activity, error) {
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
	return out, nil
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

// Remove deletes everything stored about a sandbox.
func (s *Store) Remove(id string) {
	os.Remove(s.statePath(id))
	os.Remove(s.activityPath(id))
	os.Remove(s.activityPath(id) + ".1")
}
