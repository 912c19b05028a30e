// Package keychain keeps the values of Sandtray's secrets ([secrets.NAME]
// without env or file) in the OS keychain: the macOS Keychain, the Windows
// Credential Manager, or the Secret Service on Linux (by
// github.com/zalando/go-keyring). Where none answers (a Linux without a
// Secret Service, a headless server), it keeps them in a file of its own
// in the config dir, mode 0600, and says so (Backend), for `sandtray
// doctor`.
package keychain

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"

	"github.com/zalando/go-keyring"

	"github.com/sandtray/sandtray/internal/atomicfile"
)

// Service is the keychain entries' service name; each secret is an entry
// whose user is the secret's name.
const Service = "sandtray"

// FileName is the fallback file in the config dir.
const FileName = "secrets.json"

// ErrNotFound is a secret with no value stored.
var ErrNotFound = errors.New("no value stored")

// Store is the secrets' values: the OS keychain, or the fallback file in
// Dir. Its zero value is not usable; make one with New.
type Store struct {
	dir string
	// kr is the keychain; nil where none answers.
	kr  keyringAPI
	mu  sync.Mutex
	why string // why the keychain is not used
}

// keyringAPI is go-keyring's functions (a fake in tests).
type keyringAPI interface {
	Get(service, user string) (string, error)
	Set(service, user, value string) error
	Delete(service, user string) error
}

type osKeyring struct{}

func (osKeyring) Get(s, u string) (string, error) { return keyring.Get(s, u) }
func (osKeyring) Set(s, u, v string) error        { return keyring.Set(s, u, v) }
func (osKeyring) Delete(s, u string) error        { return keyring.Delete(s, u) }

// New returns the store of config dir dir: the OS keychain when it answers
// (a look-up of an entry that does not exist comes back as not found),
// else the file.
func New(dir string) *Store {
	return newWith(dir, osKeyring{})
}

// NewFile returns the store of dir that keeps values in its file only
// (tests, and a user who wants no keychain).
func NewFile(dir string) *Store { return newWith(dir, nil) }

func newWith(dir string, kr keyringAPI) *Store {
	s := &Store{dir: dir}
	if kr == nil {
		s.why = "the file was asked for"
		return s
	}
	_, err := kr.Get(Service, "sandtray-probe")
	if err == nil || errors.Is(err, keyring.ErrNotFound) {
		s.kr = kr
		return s
	}
	s.why = err.Error()
	return s
}

// File is the fallback file's path.
func (s *Store) File() string { return filepath.Join(s.dir, FileName) }

// Backend says where values are kept: "the OS keychain", or the file and
// why the keychain is not used.
func (s *Store) Backend() (where string, keychain bool) {
	if s.kr != nil {
		return "the OS keychain", true
	}
	return fmt.Sprintf("%s (mode 0600), as no OS keychain answered: %s", s.File(), s.why), false
}

// Get returns the value of secret name; ErrNotFound when none is stored.
func (s *Store) Get(name string) (string, error) {
	if s.kr != nil {
		v, err := s.kr.Get(Service, name)
		if err == nil {
			return v, nil
		}
		if !errors.Is(err, keyring.ErrNotFound) {
			return "", fmt.Errorf("read secret %s from the OS keychain: %w", name, err)
		}
	}
	// The file too: a value stored while the keychain did not answer.
	m, err := s.readFile()
	if err != nil {
		return "", err
	}
	if v, ok := m[name]; ok {
		return v, nil
	}
	return "", fmt.Errorf("secret %s: %w", name, ErrNotFound)
}

// Set stores the value of secret name.
func (s *Store) Set(name, value string) error {
	if value == "" {
		return errors.New("the value is empty")
	}
	if s.kr != nil {
		return s.kr.Set(Service, name, value)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.readFile()
	if err != nil {
		return err
	}
	m[name] = value
	return s.writeFile(m)
}

// Delete forgets the value of secret name (none stored is no error).
func (s *Store) Delete(name string) error {
	if s.kr != nil {
		if err := s.kr.Delete(Service, name); err != nil && !errors.Is(err, keyring.ErrNotFound) {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.readFile()
	if err != nil {
		return err
	}
	if _, ok := m[name]; !ok {
		return nil
	}
	delete(m, name)
	return s.writeFile(m)
}

func (s *Store) readFile() (map[string]string, error) {
	b, err := os.ReadFile(s.File())
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s cannot be read (%v); fix or remove it", s.File(), err)
	}
	return m, nil
}

func (s *Store) writeFile(m map[string]string) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(maps.Clone(m), "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(s.File(), append(b, '\n'), 0o600)
}
