package statedir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// keyFile holds the state dir's random key. Its name cannot be a
// container id's state or activity file (those are <id>.json and
// <id>.activity.jsonl).
const keyFile = "engine.key"

// keyBytes is the key's length: 128 bits cannot be guessed.
const keyBytes = 16

// Has reports whether a state file was ever saved for sandbox id (and not
// removed since): only the engine that made or adopted the sandbox has one.
func (s *Store) Has(id string) bool {
	_, err := os.Stat(s.statePath(id))
	return err == nil
}

// Key returns the state dir's random key, making it on first use. The
// engine's identity derives from it (see Identity): it stays the
// same for as long as the state dir does, and no other state dir has it.
//
// Two engines starting on a new state dir at once agree on one key: the
// key is written whole to a temporary file that is then linked to its name,
// which fails when the name exists, so the second engine reads the first
// one's key instead of replacing it.
func (s *Store) Key() (string, error) {
	path := filepath.Join(s.dir, keyFile)
	if k, err := readKey(path); !errors.Is(err, os.ErrNotExist) {
		return k, err
	}
	b := make([]byte, keyBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(s.dir, "."+keyFile+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("state dir key: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(hex.EncodeToString(b) + "\n")
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("state dir key: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("state dir key: %w", err)
	}
	return readKey(path) // ours, or the one another engine linked first
}

// readKey reads and checks the key file at path.
func readKey(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	k := strings.TrimSpace(string(b))
	if _, err := hex.DecodeString(k); err != nil || len(k) != 2*keyBytes {
		// Made anew, the engine would no longer know its own sandboxes;
		// the user decides.
		return "", fmt.Errorf("state dir key %s is damaged (want %d hex digits); "+
			"restore it from a backup, or remove it to start as a new engine (the sandboxes made before are then left alone on Docker)",
			path, 2*keyBytes)
	}
	return k, nil
}
