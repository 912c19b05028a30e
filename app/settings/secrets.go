package settings

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/internal/atomicfile"
	"github.com/sandtray/sandtray/internal/keychain"
)

// Secret is one [secrets.NAME] as the Settings window shows it: never its
// value.
type Secret struct {
	Name     string
	Hosts    []string
	Source   string // "keychain", "env VAR" or "file PATH"
	HasValue bool   // for the keychain's: whether a value is stored
}

// keychain is the secrets' value store of this config's dir.
func (s *Store) keychain() *keychain.Store {
	if s.kc != nil {
		return s.kc
	}
	return keychain.New(filepath.Dir(s.path))
}

// SecretsWhere says where the values of secrets added here are kept.
func (s *Store) SecretsWhere() string {
	where, _ := s.keychain().Backend()
	return where
}

// Secrets lists config.toml's [secrets.*], sorted by name.
func (s *Store) Secrets() ([]Secret, error) {
	cfg, err := config.Load(s.path)
	if err != nil {
		return nil, err
	}
	kc := s.keychain()
	var out []Secret
	for _, name := range cfg.SecretNames() {
		c := cfg.Secrets[name]
		sec := Secret{Name: name, Hosts: c.Hosts, Source: c.Source(), HasValue: true}
		if sec.Source == "keychain" {
			_, err := kc.Get(name)
			sec.HasValue = err == nil
		}
		out = append(out, sec)
	}
	return out, nil
}

// AddSecret adds [secrets.name] with hosts to config.toml and keeps value
// in the OS keychain (or the fallback file). Nothing is written when the
// name or a host is refused, or the secret exists.
func (s *Store) AddSecret(name, value string, hosts []string) error {
	if err := config.ValidSecretName(name); err != nil {
		return err
	}
	if strings.TrimSpace(value) == "" {
		return errors.New("the value is empty: paste the key")
	}
	doc, err := s.read()
	if err != nil {
		return err
	}
	if _, _, ok := secretBlock(doc, name); ok {
		return fmt.Errorf("a secret named %s exists; remove it first, or bind its hosts", name)
	}
	next := strings.TrimRight(doc, "\n")
	if next != "" {
		next += "\n\n"
	}
	next += "[secrets." + name + "]\n" + hostsLine(hosts)
	// The value first: a section whose value is missing would be a secret
	// no sandbox gets.
	if err := s.keychain().Set(name, strings.TrimSpace(value)); err != nil {
		return fmt.Errorf("keep the value of %s: %w", name, err)
	}
	if err := s.writeChecked(next); err != nil {
		_ = s.keychain().Delete(name)
		return err
	}
	return nil
}

// BindSecret sets the hosts of [secrets.name].
func (s *Store) BindSecret(name string, hosts []string) error {
	doc, err := s.read()
	if err != nil {
		return err
	}
	start, end, ok := secretBlock(doc, name)
	if !ok {
		return fmt.Errorf("config.toml has no [secrets.%s] section to change; edit it by hand", name)
	}
	lines := strings.SplitAfter(doc, "\n")
	var block []string
	inHosts := false
	for _, l := range lines[start+1 : end] {
		t := strings.TrimSpace(l)
		if inHosts || strings.HasPrefix(t, "hosts") && strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(t, "hosts")), "=") {
			inHosts = strings.Count(l, "[") > strings.Count(l, "]") || inHosts && !strings.Contains(l, "]")
			continue
		}
		block = append(block, l)
	}
	next := strings.Join(lines[:start+1], "") + hostsLine(hosts) + strings.Join(block, "") + strings.Join(lines[end:], "")
	return s.writeChecked(next)
}

// RemoveSecret removes [secrets.name] from config.toml and its value from
// the keychain.
func (s *Store) RemoveSecret(name string) error {
	doc, err := s.read()
	if err != nil {
		return err
	}
	start, end, ok := secretBlock(doc, name)
	if !ok {
		return fmt.Errorf("config.toml has no [secrets.%s] section to remove; edit it by hand", name)
	}
	lines := strings.SplitAfter(doc, "\n")
	next := strings.TrimRight(strings.Join(lines[:start], ""), "\n")
	if rest := strings.Join(lines[end:], ""); rest != "" {
		next += "\n\n" + rest
	} else if next != "" {
		next += "\n"
	}
	if err := s.writeChecked(next); err != nil {
		return err
	}
	return s.keychain().Delete(name)
}

func (s *Store) read() (string, error) {
	b, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	return string(b), err
}

// writeChecked replaces config.toml (through its symlink, keeping its
// mode) with doc when doc loads as a valid config, so a bad host or name
// is refused before anything is written.
func (s *Store) writeChecked(doc string) error {
	_, mode, err := readFile(s.path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.target()), 0o700); err != nil {
		return err
	}
	var loadErr error
	ok, err := atomicfile.WriteIf(s.target(), []byte(doc), mode, func(tmp string) bool {
		if _, loadErr = config.Load(tmp); loadErr != nil {
			loadErr = errors.New(strings.ReplaceAll(loadErr.Error(), tmp, "config.toml"))
		}
		return loadErr == nil
	})
	if err != nil {
		return err
	}
	if !ok {
		return loadErr
	}
	return nil
}

// secretBlock finds [secrets.name]'s lines: its header's index and the
// index of the next table's header (or the end).
func secretBlock(doc, name string) (start, end int, ok bool) {
	lines := strings.SplitAfter(doc, "\n")
	start = -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if start < 0 {
			if h, _, _ := strings.Cut(t, "#"); strings.TrimSpace(h) == "[secrets."+name+"]" {
				start = i
			}
			continue
		}
		if strings.HasPrefix(t, "[") {
			return start, i, true
		}
	}
	return start, len(lines), start >= 0
}

func hostsLine(hosts []string) string {
	q := make([]string, len(hosts))
	for i, h := range hosts {
		q[i] = strconv.Quote(strings.TrimSpace(h))
	}
	return "hosts = [" + strings.Join(q, ", ") + "]\n"
}
