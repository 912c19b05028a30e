package probe

import (
	"context"
	"errors"
	"os/exec"
	"testing"
)

// TestParseToolkitVersion: the version in each toolkit program's answer to
// --version, as NVIDIA's programs print it.
func TestParseToolkitVersion(t *testing.T) {
	tests := []struct{ out, want string }{
		{"NVIDIA Container Toolkit CLI version 1.17.8\ncommit: f202b80a9b9d0db00d9b1d73c0128c8962c55f4d\n", "1.17.8"},
		{"NVIDIA Container Runtime Hook version 1.17.7\ncommit: 4ea1ec3\n", "1.17.7"},
		{"NVIDIA Container Runtime version 1.16.2\ncommit: a470818\nspec: 1.2.0\n\nrunc version 1.1.12\n", "1.16.2"},
		{"cli-version: 1.14.3\nlib-version: 1.14.3\nbuild date: 2023-10-19T11:32+00:00\n", "1.14.3"},
		{"nvidia-ctk version v1.18.0\n", "1.18.0"},
		{"Incorrect Usage: flag provided but not defined: -version\n", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := ParseToolkitVersion(tt.out); got != tt.want {
			t.Errorf("ParseToolkitVersion(%q) = %q, want %q", tt.out, got, tt.want)
		}
	}
	for v, old := range map[string]bool{"1.17.7": true, "1.17.8": false, "1.9.10": true, "1.18.0": false, "2.0.0": false, "0.17.9": true, "1.17.10": false} {
		if ToolkitTooOld(v) != old {
			t.Errorf("ToolkitTooOld(%s) = %v, want %v", v, !old, old)
		}
	}
}

// TestFindToolkit: the oldest version among the toolkit's programs found,
// the first program whose answer names no version, or nothing.
func TestFindToolkit(t *testing.T) {
	answers := func(m map[string]string) (func(string) (string, error), func(context.Context, string) (string, error)) {
		look := func(name string) (string, error) {
			if _, ok := m[name]; ok {
				return "/usr/bin/" + name, nil
			}
			return "", exec.ErrNotFound
		}
		run := func(_ context.Context, path string) (string, error) {
			return m[path[len("/usr/bin/"):]], errors.New("exit status 0 or not, the answer counts")
		}
		return look, run
	}
	tests := []struct {
		name   string
		progs  map[string]string
		want   Toolkit
		tooOld bool
	}{
		{"none", map[string]string{}, Toolkit{}, false},
		{"an old hook beside a new CLI", map[string]string{
			"nvidia-ctk":                    "NVIDIA Container Toolkit CLI version 1.17.8\n",
			"nvidia-container-runtime-hook": "NVIDIA Container Runtime Hook version 1.17.4\n",
		}, Toolkit{Path: "/usr/bin/nvidia-container-runtime-hook", Version: "1.17.4", TooOld: true}, true},
		{"up to date", map[string]string{"nvidia-ctk": "NVIDIA Container Toolkit CLI version 1.18.1\n"},
			Toolkit{Path: "/usr/bin/nvidia-ctk", Version: "1.18.1"}, false},
		{"no version in the answer", map[string]string{"nvidia-ctk": "something else\nmore\n"},
			Toolkit{Path: "/usr/bin/nvidia-ctk", Output: "something else"}, false},
	}
	for _, tt := range tests {
		look, run := answers(tt.progs)
		got := findToolkit(context.Background(), look, run)
		if got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
		if got.Version != "" && ToolkitTooOld(got.Version) != tt.tooOld {
			t.Errorf("%s: too old = %v, want %v", tt.name, !tt.tooOld, tt.tooOld)
		}
	}
}
