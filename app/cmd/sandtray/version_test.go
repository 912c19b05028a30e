package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

func TestVersionPrintsVersionAndCommit(t *testing.T) {
	old := commit
	t.Cleanup(func() { commit = old })
	commit = "0123456789ab"
	var out bytes.Buffer
	if err := run(context.Background(), []string{"version"}, nil, &out, &out); err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^sandtray \d+\.\d+\.\d+ \(commit 0123456789ab, go[^ ]+ \w+/\w+\)\n$`)
	if !want.MatchString(out.String()) {
		t.Errorf("version printed %q", out.String())
	}
}

func TestAutostartCommands(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	entry := filepath.Join(cfg, "autostart", "sandtray.desktop")
	steps := []struct {
		arg   string
		want  string
		entry bool
	}{
		{"status", "does not start at login", false},
		{"enable", "starts at login", true},
		{"status", "starts at login: " + entry, true},
		{"disable", "does not start at login", false},
	}
	for _, s := range steps {
		var out bytes.Buffer
		if err := run(context.Background(), []string{"autostart", s.arg}, nil, &out, &out); err != nil {
			t.Fatalf("autostart %s: %v", s.arg, err)
		}
		if !bytes.Contains(out.Bytes(), []byte(s.want)) {
			t.Errorf("autostart %s printed %q, want %q", s.arg, out.String(), s.want)
		}
		if _, err := os.Stat(entry); (err == nil) != s.entry {
			t.Errorf("after autostart %s: entry exists = %v, want %v", s.arg, err == nil, s.entry)
		}
	}
	if err := run(context.Background(), []string{"autostart", "on"}, nil, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Error("autostart on was accepted")
	}
}
