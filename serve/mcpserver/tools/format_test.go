package tools

import (
	"io/fs"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestRenderTree(t *testing.T) {
	listing := sandbox.Listing{Path: "/workspace", Entries: []sandbox.FileEntry{
		{Path: "a", Type: "dir"},
		{Path: "a/b", Type: "dir"},
		{Path: "a/b/deep.txt", Type: "file"},
		{Path: "a/link", Type: "symlink", Target: "../z"},
		{Path: "orphan/x.py", Type: "file"}, // parent missing from the listing
		{Path: "z", Type: "file"},
	}}
	want := `/workspace
├── a/
│   ├── b/
│   │   └── deep.txt
│   └── link -> ../z
├── orphan/
│   └── x.py
└── z

2 directories, 4 files`
	if diff := cmp.Diff(want, renderTree(listing)); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
}

func TestRenderList(t *testing.T) {
	mod := time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)
	listing := sandbox.Listing{Path: "/workspace", Entries: []sandbox.FileEntry{
		{Path: "data", Type: "dir", Mode: "0755", Size: 4096, ModTime: mod},
		{Path: "main.py", Type: "file", Mode: "0644", Size: 1536, ModTime: mod},
	}}
	want := "/workspace:\n" +
		"dir   0755  4 KiB    2025-03-01 09:30  data/\n" +
		"file  0644  1.5 KiB  2025-03-01 09:30  main.py"
	if diff := cmp.Diff(want, renderList(listing)); diff != "" {
		t.Errorf("listing (-want +got):\n%s", diff)
	}
	if got := renderList(sandbox.Listing{Path: "/tmp"}); got != "/tmp is empty." {
		t.Errorf("empty listing = %q", got)
	}
}

func TestExecText(t *testing.T) {
	tests := []struct {
		name string
		r    sandbox.ExecResult
		want string
	}{
		{"stdout only", sandbox.ExecResult{Stdout: "ok", Duration: 250 * time.Millisecond}, "ok\n[exit code 0 after 0.25s]"},
		{"failure with stderr", sandbox.ExecResult{Stdout: "a\n", Stderr: "boom", ExitCode: 2, Duration: time.Second},
			"a\n[stderr]\nboom\n[exit code 2 after 1s]"},
		{"silent", sandbox.ExecResult{Duration: time.Second}, "(no output)\n[exit code 0 after 1s]"},
		{"timeout", sandbox.ExecResult{Stdout: "tick\n", TimedOut: true, ExitCode: -1, Duration: 30 * time.Second, Truncated: true},
			"tick\n[timed out after 30s; it was killed with everything it started]\n[output truncated; sandbox_logs keeps more]"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, execText(tt.r)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestTextOfKeepsWholeCharacters(t *testing.T) {
	tests := []struct {
		name    string
		file    sandbox.FileContent
		want    string
		wantErr bool
	}{
		{"complete text", sandbox.FileContent{Data: []byte("héllo")}, "héllo", false},
		{"cut inside a 3-byte character", sandbox.FileContent{Data: []byte("a€")[:3], Truncated: true}, "a", false},
		{"cut inside a 4-byte character", sandbox.FileContent{Data: []byte("ab😀")[:5], Truncated: true}, "ab", false},
		{"binary", sandbox.FileContent{Data: []byte{0xff, 0xfe, 'a'}}, "", true},
		{"a cut character in a whole file is still invalid", sandbox.FileContent{Data: []byte("a€")[:3]}, "", true},
	}
	for _, tt := range tests {
		got, err := textOf(tt.file)
		if (err != nil) != tt.wantErr || string(got) != tt.want {
			t.Errorf("%s: textOf = %q, %v; want %q, error %v", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestFileMode(t *testing.T) {
	tests := []struct {
		in   any
		want fs.FileMode
		bad  bool
	}{
		{"0755", 0o755, false},
		{"644", 0o644, false},
		{"4755", fs.ModeSetuid | 0o755, false},
		{"0888", 0, true},
		{"u+x", 0, true},
		{493.0, 0, true}, // a JSON number, not an octal string
	}
	for _, tt := range tests {
		c := &call{args: map[string]any{"mode": tt.in}}
		got := c.fileMode("mode")
		if got != tt.want || (c.problem() != nil) != tt.bad {
			t.Errorf("fileMode(%v) = %v, problem %v; want %v, problem %v", tt.in, got, c.problem(), tt.want, tt.bad)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for in, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 16 << 20: "16 MiB", 3 << 30: "3 GiB"} {
		if got := formatBytes(in); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestFormatSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{
		2603 * time.Millisecond:             "2.603s",
		2802999 * time.Microsecond:          "2.803s",
		30 * time.Second:                    "30s",
		1500 * time.Microsecond:             "0.002s",
		0:                                   "0s",
		10*time.Minute + 1*time.Millisecond: "600.001s",
	} {
		if got := formatSeconds(d); got != want {
			t.Errorf("formatSeconds(%v) = %q, want %q", d, got, want)
		}
	}
}
