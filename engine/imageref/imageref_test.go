package imageref_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/imageref"
	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestTag(t *testing.T) {
	tests := []struct {
		in, want string
		bad      bool
	}{
		{in: "myenv", want: "myenv:latest"},
		{in: "me/myenv:v1", want: "me/myenv:v1"},
		{in: "docker.io/library/debian:12", want: "debian:12"},
		{in: "localhost:5000/x/y:z", want: "localhost:5000/x/y:z"},
		{in: "UPPER", bad: true},
		{in: "x:bad tag", bad: true},
		{in: "debian@sha256:" + strings.Repeat("a", 64), bad: true},
		{in: "", bad: true},
	}
	for _, tc := range tests {
		got, err := imageref.Tag(tc.in)
		if tc.bad {
			if !errors.Is(err, sandbox.ErrInvalid) {
				t.Errorf("Tag(%q) = %q, %v; want ErrInvalid", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Tag(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestRegistry(t *testing.T) {
	for ref, want := range map[string]string{
		"python:3.12":                   "docker.io",
		"library/python":                "docker.io",
		"docker.io/library/python:3.12": "docker.io",
		"ghcr.io/owner/app:1":           "ghcr.io",
		"localhost:5000/x":              "localhost:5000",
		"exfil.example.com/data:1":      "exfil.example.com",
	} {
		if got, err := imageref.Registry(ref); err != nil || got != want {
			t.Errorf("Registry(%q) = %q, %v; want %q", ref, got, err, want)
		}
	}
	if _, err := imageref.Registry("Not A/Name"); !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("Registry of a malformed name: %v, want ErrInvalid", err)
	}
}
