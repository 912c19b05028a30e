package settings

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// edit returns the store's fields with the given keys set.
func edit(t *testing.T, s *Store, values map[string]string, lists map[string][]string) []Field {
	t.Helper()
	fields, err := s.Fields()
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range fields {
		if v, ok := values[f.Key]; ok {
			fields[i].Value = v
		}
		if v, ok := lists[f.Key]; ok {
			fields[i].List = v
		}
	}
	return fields
}

func newStore(t *testing.T, content string) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sandtray", "config.toml")
	if content != "" {
		os.MkdirAll(filepath.Dir(path), 0o700)
		if err := os.WriteFile(path, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	return New(path), path
}

const commented = `# My Sandtray settings.
default_image = "python:3.12"   # the one my team uses

[limits]
# Enough for pandas.
memory_mb = 2048 # MB
cpus = 2.0

[host]
allowed_roots = [
  "/srv/data",   # shared
  "/tmp/x",
]
`

func TestSaveEditsOnlyChangedKeysKeepingComments(t *testing.T) {
	s, path := newStore(t, commented)
	saved, err := s.Save(edit(t, s,
		map[string]string{"limits.memory_mb": "4096", "sandbox.network": "egress", "pool.size": "0"},
		map[string][]string{"host.allowed_roots": {"/srv/data", `/home/me/My "odd" folder`}}))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"limits.memory_mb", "sandbox.network", "host.allowed_roots", "pool.size"}
	if strings.Join(saved.Changed, " ") != strings.Join(want, " ") || saved.Rewritten {
		t.Errorf("Saved = %+v, want changed %v edited in place", saved, want)
	}
	got, _ := os.ReadFile(path)
	wantDoc := `# My Sandtray settings.
default_image = "python:3.12"   # the one my team uses

[limits]
# Enough for pandas.
memory_mb = 4096 # MB
cpus = 2.0

[host]
allowed_roots = ["/srv/data", "/home/me/My \"odd\" folder"]

[sandbox]
network = "egress"

[pool]
size = 0
`
	if string(got) != wantDoc {
		t.Errorf("config.toml =\n%s\nwant\n%s", got, wantDoc)
	}
	cfg, err := config.Load(path)
	if err != nil || cfg.Limits.MemoryMB != 4096 || cfg.Sandbox.Network != "egress" || cfg.Host.AllowedRoots[1] != `/home/me/My "odd" folder` {
		t.Errorf("LoadConfig after Save = %+v, %v", cfg, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640 kept", fi.Mode().Perm())
	}
	assertNoTempFiles(t, path)
}

func TestSaveRefusesWhatTheLoaderRefuses(t *testing.T) {
	tests := []struct {
		key, value, want string
		invalid          bool // the engine's Validate refused it
	}{
		{"limits.memory_mb", "8", "limits.memory_mb must be at least 16", true},
		{"limits.max_memory_mb", "100", "limits.max_memory_mb must be at least limits.memory_mb", true},
		{"pool.size", "99", "pool.size must be 0 (no pool) to 16", true},
		{"default_image", "", "default_image must name an image", true},
		{"limits.memory_mb", "lots", "limits.memory_mb must be a whole number", false},
		{"limits.cpus", "two", "limits.cpus must be a number", false},
		{"limits.exec_timeout", "30", `limits.exec_timeout must be a duration such as "30 s"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.value, func(t *testing.T) {
			s, path := newStore(t, commented)
			_, err := s.Save(edit(t, s, map[string]string{tt.key: tt.value}, nil))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if errors.Is(err, sandbox.ErrInvalid) != tt.invalid {
				t.Errorf("errors.Is(err, ErrInvalid) = %v, want %v", !tt.invalid, tt.invalid)
			}
			if got, _ := os.ReadFile(path); string(got) != commented {
				t.Errorf("the file changed:\n%s", got)
			}
			assertNoTempFiles(t, path)
		})
	}
	s, _ := newStore(t, "")
	if _, err := s.Save(edit(t, s, nil, map[string][]string{"host.allowed_roots": {"relative/dir"}})); err == nil ||
		!strings.Contains(err.Error(), "host.allowed_roots[0]") {
		t.Errorf("a relative host folder: err = %v", err)
	}
}

func TestSaveCreatesTheFile(t *testing.T) {
	s, path := newStore(t, "")
	if _, err := s.Save(edit(t, s, map[string]string{"limits.memory_mb": "512", "default_image": "debian:12"}, nil)); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := "default_image = \"debian:12\"\n\n[limits]\nmemory_mb = 512\n"; string(got) != want {
		t.Errorf("new config.toml = %q, want %q", got, want)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
}

func TestSaveWithoutChangesWritesNothing(t *testing.T) {
	s, path := newStore(t, commented)
	before, _ := os.Stat(path)
	saved, err := s.Save(edit(t, s, map[string]string{"limits.cpus": "2"}, nil)) // 2 is 2.0
	if err != nil || len(saved.Changed) != 0 {
		t.Fatalf("Save = %+v, %v; want nothing changed", saved, err)
	}
	if after, _ := os.Stat(path); !os.SameFile(before, after) {
		t.Error("the file was replaced")
	}
}

func TestSaveRewritesWhatItCannotEditInPlace(t *testing.T) {
	inline := "# mine\nlimits = { memory_mb = 2048, cpus = 2.0 }\n"
	s, path := newStore(t, inline)
	saved, err := s.Save(edit(t, s, map[string]string{"limits.memory_mb": "3000"}, nil))
	if err != nil || !saved.Rewritten || saved.Backup != path+".bak" {
		t.Fatalf("Save = %+v, %v; want a whole rewrite with a backup", saved, err)
	}
	if b, _ := os.ReadFile(saved.Backup); string(b) != inline {
		t.Errorf("backup = %q", b)
	}
	cfg, err := config.Load(path)
	if err != nil || cfg.Limits.MemoryMB != 3000 || cfg.Limits.CPUs != 2 {
		t.Errorf("LoadConfig after the rewrite = %+v, %v", cfg.Limits, err)
	}
}

func TestSaveThroughSymlinkKeepsTheLink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "sandtray.toml")
	os.MkdirAll(filepath.Dir(real), 0o700)
	os.WriteFile(real, []byte(commented), 0o600)
	link := filepath.Join(dir, "config.toml")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	s := New(link)
	if _, err := s.Save(edit(t, s, map[string]string{"limits.memory_mb": "1000"}, nil)); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("config.toml is no longer a symlink")
	}
	if b, _ := os.ReadFile(real); !strings.Contains(string(b), "memory_mb = 1000 # MB") {
		t.Errorf("the link's target was not edited:\n%s", b)
	}
}

func assertNoTempFiles(t *testing.T, path string) {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestSaveHTTPEndpoint(t *testing.T) {
	s, path := newStore(t, "")
	if _, err := s.Save(edit(t, s, map[string]string{"http.listen": "0.0.0.0:8765"}, nil)); err == nil ||
		!strings.Contains(err.Error(), "http.listen") {
		t.Errorf("a non-loopback endpoint without TLS: err = %v", err)
	}
	if _, err := s.Save(edit(t, s, map[string]string{"http.listen": "127.0.0.1:8765"}, nil)); err != nil {
		t.Fatal(err)
	}
	if cfg, err := config.Load(path); err != nil || cfg.HTTP.Listen != "127.0.0.1:8765" {
		t.Errorf("http.listen = %q, %v", cfg.HTTP.Listen, err)
	}
}

// TestSaveEgressAsk: the dialog that asks about unknown hosts is turned on
// from Settings, and applies to the running engine.
func TestSaveEgressAsk(t *testing.T) {
	s, path := newStore(t, "")
	if _, err := s.Save(edit(t, s, map[string]string{"egress.ask": "true", "egress.ask_timeout": "2m"}, nil)); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil || !cfg.Egress.Ask || cfg.Egress.AskTimeout.Duration != 2*time.Minute {
		t.Errorf("egress.ask = %v, ask_timeout = %v, %v; want true, 2m", cfg.Egress.Ask, cfg.Egress.AskTimeout, err)
	}
	fields, err := s.Fields()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fields {
		if f.Key == "egress.ask" && f.Applies == Restart {
			t.Errorf("egress.ask is said to wait for a restart; the engine applies it live")
		}
	}
}

func TestSaveProfile(t *testing.T) {
	s, path := newStore(t, "")
	if _, err := s.Save(edit(t, s, map[string]string{"sandbox.profile": "paranoid"}, nil)); err == nil ||
		!strings.Contains(err.Error(), "sandbox.profile") {
		t.Errorf("an unknown profile: err = %v", err)
	}
	if _, err := s.Save(edit(t, s, map[string]string{"sandbox.profile": "strict"}, nil)); err != nil {
		t.Fatal(err)
	}
	if cfg, err := config.Load(path); err != nil || cfg.Sandbox.Profile != "strict" {
		t.Errorf("sandbox.profile = %q, %v", cfg.Sandbox.Profile, err)
	}
}

// TestFieldsSayWhatAppliesNow: the window says a change applies at once
// exactly where the running engine applies it (engine.AppliesLive).
func TestFieldsSayWhatAppliesNow(t *testing.T) {
	s, _ := newStore(t, "")
	fields, err := s.Fields()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Applies{"limits.memory_mb": NewSandboxes, "default_image": NewSandboxes,
		"host.allowed_roots": NewSandboxes, "pool.size": NewSandboxes, "http.listen": Restart}
	for _, f := range fields {
		if w, ok := want[f.Key]; ok && f.Applies != w {
			t.Errorf("%s applies %v, want %v", f.Key, f.Applies, w)
		}
		if (f.Applies == Restart) == config.AppliesLive(f.Key) {
			t.Errorf("%s: the window and the engine disagree on when it applies", f.Key)
		}
	}
}

// TestDurationsReadAsPeopleWriteThem: a duration shows as "1 min", not
// Go's "1m0s", and what a person types ("2 min", "90 s", or Go's "2m")
// is saved in Go's short form, which the engine reads.
func TestDurationsReadAsPeopleWriteThem(t *testing.T) {
	s, path := newStore(t, "[limits]\nexec_timeout = \"1m0s\"\n")
	fields, err := s.Fields()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fields {
		if f.Key == "limits.exec_timeout" && f.Value != "1 min" {
			t.Errorf("the command timeout shows %q; want \"1 min\"", f.Value)
		}
	}
	if _, err := s.Save(edit(t, s, map[string]string{"limits.exec_timeout": "2 min"}, nil)); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `exec_timeout = "2m"`) {
		t.Errorf("saved:\n%s\nwant exec_timeout = \"2m\"", b)
	}
}

// TestLabelsSayWhatEachKeyDoes: the window names what a setting does, not
// its key: "allow_network" is "Let sandboxes use the bridge network"; no
// two settings share a label.
func TestLabelsSayWhatEachKeyDoes(t *testing.T) {
	seen := map[string]string{}
	for _, f := range table {
		if other, ok := seen[f.Label]; ok {
			t.Errorf("%s and %s are both %q", other, f.Key, f.Label)
		}
		seen[f.Label] = f.Key
		if len(strings.Fields(f.Label)) < 3 {
			t.Errorf("%s is labelled %q: say what it does", f.Key, f.Label)
		}
	}
	if seen["Let sandboxes use the bridge network"] != "sandbox.allow_network" {
		t.Errorf("sandbox.allow_network is not labelled \"Let sandboxes use the bridge network\"")
	}
}
