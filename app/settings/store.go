package settings

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/BurntSushi/toml"

	"github.com/sandtray/sandtray/internal/atomicfile"
	"github.com/sandtray/sandtray/internal/keychain"
)

// Store reads and writes the settings in one config.toml.
type Store struct {
	path string
	kc   *keychain.Store // the secrets' values; nil: the OS keychain of the config's dir (secrets.go)
}

// New returns the Store of the config file at path (which need not exist).
func New(path string) *Store { return &Store{path: path} }

// Path is the config file.
func (s *Store) Path() string { return s.path }

// Fields returns every setting the window shows, with its current value:
// the file's, or the default for keys it does not set.
func (s *Store) Fields() ([]Field, error) {
	cfg, err := config.Load(s.path)
	if err != nil {
		return nil, err
	}
	return fieldsOf(cfg), nil
}

func fieldsOf(cfg config.Config) []Field {
	out := make([]Field, len(table))
	for i, f := range table {
		out[i] = f.Field
		if !config.AppliesLive(f.Key) {
			out[i].Applies = Restart
		}
		switch v := f.get(cfg).(type) {
		case []string:
			out[i].List = slices.Clone(v)
		default:
			out[i].Value = text(v)
		}
	}
	return out
}

// Saved says what Save changed.
type Saved struct {
	Changed []string // the keys whose values changed, in window order
	// Rewritten is set when the file could not be edited line by line (it
	// sets a key in a way the editor does not follow, such as an inline
	// table) and was written whole instead: its comments are then only in
	// Backup.
	Rewritten bool
	Backup    string
}

// Save checks the edited fields with the engine's config loader and, when
// it accepts them, writes the changed keys to config.toml atomically.
// Fields not in table are ignored. Nothing is written when a value is
// refused or nothing changed.
func (s *Store) Save(edited []Field) (Saved, error) {
	cfg, err := config.Load(s.path)
	if err != nil {
		return Saved{}, fmt.Errorf("%w; fix the file by hand first", err)
	}
	current := fieldsOf(cfg)
	var changes []change
	for _, e := range edited {
		i := slices.IndexFunc(current, func(f Field) bool { return f.Key == e.Key })
		if i < 0 {
			continue
		}
		lit, err := literal(current[i], e.Value, e.List)
		if err != nil {
			return Saved{}, err
		}
		old, _ := literal(current[i], current[i].Value, current[i].List)
		if lit != old {
			changes = append(changes, change{key: e.Key, lit: lit})
		}
	}
	if len(changes) == 0 {
		return Saved{}, nil
	}
	want, err := apply(cfg, changes)
	if err != nil {
		return Saved{}, err
	}
	saved := Saved{}
	for _, c := range changes {
		saved.Changed = append(saved.Changed, c.key)
	}
	return s.write(want, changes, saved)
}

// change is one key's new TOML value.
type change struct{ key, lit string }

// apply decodes the changes over cfg and validates the result with the
// engine's Validate, the check LoadConfig makes.
func apply(cfg config.Config, changes []change) (config.Config, error) {
	var top, tables strings.Builder
	byTable := map[string][]change{}
	var order []string
	for _, c := range changes {
		t, name, ok := strings.Cut(c.key, ".")
		if !ok {
			fmt.Fprintf(&top, "%s = %s\n", c.key, c.lit)
			continue
		}
		if _, seen := byTable[t]; !seen {
			order = append(order, t)
		}
		byTable[t] = append(byTable[t], change{key: name, lit: c.lit})
	}
	for _, t := range order {
		fmt.Fprintf(&tables, "[%s]\n", t)
		for _, c := range byTable[t] {
			fmt.Fprintf(&tables, "%s = %s\n", c.key, c.lit)
		}
	}
	out := cloneConfig(cfg)
	if _, err := toml.Decode(top.String()+tables.String(), &out); err != nil {
		return config.Config{}, err
	}
	if err := out.Validate(); err != nil {
		return config.Config{}, err
	}
	return out, nil
}

// cloneConfig copies cfg so decoding into the copy leaves cfg's slices alone.
func cloneConfig(c config.Config) config.Config {
	c.Host.AllowedRoots = slices.Clone(c.Host.AllowedRoots)
	c.Pool.Images = slices.Clone(c.Pool.Images)
	c.Sandbox.CapAdd = slices.Clone(c.Sandbox.CapAdd)
	return c
}

// write edits the file line by line and checks, with LoadConfig, that the
// edited file reads back as want; when it does not, the whole config is
// written instead, after a backup.
func (s *Store) write(want config.Config, changes []change, saved Saved) (Saved, error) {
	old, mode, err := readFile(s.path)
	if err != nil {
		return saved, err
	}
	doc := string(old)
	for _, c := range changes {
		doc = setKey(doc, c.key, c.lit)
	}
	ok, err := s.replaceIfReadsAs([]byte(doc), mode, want)
	if err != nil || ok {
		return saved, err
	}
	var whole bytes.Buffer
	whole.WriteString("# Sandtray settings, written by the Settings window. Your previous file: config.toml.bak\n")
	if err := toml.NewEncoder(&whole).Encode(want); err != nil {
		return saved, fmt.Errorf("encode %s: %w", s.path, err)
	}
	saved.Rewritten, saved.Backup = true, s.path+".bak"
	if err := atomicfile.Write(saved.Backup, old, mode); err != nil {
		return saved, fmt.Errorf("back up %s: %w", s.path, err)
	}
	if ok, err := s.replaceIfReadsAs(whole.Bytes(), mode, want); err != nil || !ok {
		return saved, errors.Join(fmt.Errorf("could not write %s so that it reads back as saved; it was not changed", s.path), err)
	}
	return saved, nil
}

// replaceIfReadsAs writes data to a temporary file beside the config, reads
// it with LoadConfig and, when it gives want, renames it over the config.
func (s *Store) replaceIfReadsAs(data []byte, mode fs.FileMode, want config.Config) (bool, error) {
	return atomicfile.WriteIf(s.target(), data, mode, func(tmp string) bool {
		got, err := config.Load(tmp)
		return err == nil && reflect.DeepEqual(fieldsOf(got), fieldsOf(want))
	})
}

// target is the file to replace: the config, or what its symlink points at
// (dotfile managers link it), so the link stays a link.
func (s *Store) target() string {
	if real, err := filepath.EvalSymlinks(s.path); err == nil {
		return real
	}
	return s.path
}

// readFile reads the config, or nothing with mode 0600 when it is missing.
func readFile(path string) ([]byte, fs.FileMode, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0o600, nil
	}
	if err != nil {
		return nil, 0, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	return data, fi.Mode().Perm(), nil
}
