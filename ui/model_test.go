package ui

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/serve/control"
)

func TestHistoryKeepsTheWindowAndDropsVanishedSandboxes(t *testing.T) {
	m := newModel()
	for i := 0; i <= 10; i++ {
		s := snapshot(alpha, beta)
		s.Time = t0.Add(time.Duration(i) * time.Minute)
		m.apply(s)
	}
	m.apply(snapshot(alpha, beta)) // an older time: ignored
	h := m.samples(alpha.ID)
	if len(h) != 6 || !h[0].at.Equal(t0.Add(5*time.Minute)) {
		t.Errorf("history has %d samples from %v, want 6 from the last 5 minutes", len(h), h[0].at)
	}
	s := snapshot(alpha)
	s.Time = t0.Add(11 * time.Minute)
	m.apply(s)
	if m.samples(beta.ID) != nil {
		t.Error("beta's history outlived beta")
	}
}

func TestChartPoints(t *testing.T) {
	samples := []sample{
		{at: t0.Add(-6 * time.Minute), cpu: 50}, // outside the window
		{at: t0.Add(-5 * time.Minute), cpu: 50},
		{at: t0.Add(-150 * time.Second), cpu: 200},
		{at: t0, cpu: 0},
	}
	got := chartPoints(samples, t0, 5*time.Minute, 100, func(s sample) float64 { return s.cpu })
	want := []fyne.Position{{X: 0, Y: 0.5}, {X: 0.5, Y: 1}, {X: 1, Y: 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("points (-want +got):\n%s", diff)
	}
}

func TestChartScales(t *testing.T) {
	samples := []sample{{cpu: 30, mem: 100 << 20}, {cpu: 180, mem: 10 << 20}}
	tests := []struct {
		name         string
		info         sandbox.Info
		cpuTop, memT float64
	}{
		{"limits", alpha, 100, 512 << 20},
		{"no limits", sandbox.Info{}, 180, 125 << 20},
		{"two cpus", sandbox.Info{Spec: sandbox.Spec{CPUs: 2, MemoryMB: 256}}, 200, 256 << 20},
	}
	for _, tt := range tests {
		cpu, mem := chartScales(tt.info, samples)
		if cpu != tt.cpuTop || mem != tt.memT {
			t.Errorf("%s: scales %v, %v; want %v, %v", tt.name, cpu, mem, tt.cpuTop, tt.memT)
		}
	}
}

func TestPreviewText(t *testing.T) {
	tests := []struct {
		name       string
		content    sandbox.FileContent
		err        error
		text, note string
	}{
		{"text", sandbox.FileContent{Data: []byte("hi\n"), Size: 3}, nil, "hi\n", "a.txt · 3 B"},
		{"truncated mid-rune", sandbox.FileContent{Data: []byte("h\xc3"), Size: 4000, Truncated: true}, nil, "h", "a.txt · 3.9 KiB · showing the first 1 B; Save to host… for all of it"},
		{"long", sandbox.FileContent{Data: []byte(strings.Repeat("line\n", 1000)), Size: 5000}, nil, strings.Repeat("line\n", 1000),
			"a.txt · 4.9 KiB · showing the first 1000 B; Save to host… for all of it"},
		{"binary", sandbox.FileContent{Data: []byte("\x7fELF\x00\x01"), Size: 6}, nil, "", "a.txt is a binary file (6 B); save it to the host to open it."},
		{"error", sandbox.FileContent{}, errors.New("gone"), "", "Could not read a.txt: gone"},
	}
	for _, tt := range tests {
		text, note := previewText("a.txt", tt.content, tt.err)
		if text != tt.text || note != tt.note {
			t.Errorf("%s: got %q, %q; want %q, %q", tt.name, text, note, tt.text, tt.note)
		}
	}
}

func TestSpecTexts(t *testing.T) {
	spec := sandbox.Spec{MemoryMB: 512, CPUs: 1.5, PidsLimit: 256, CapAdd: []string{"CHOWN", "SETUID"}, Network: "bridge"}
	tests := []struct{ got, want string }{
		{LimitsText(spec), "memory 512 MiB (no swap), 1.5 CPUs, 256 processes"},
		{LimitsText(sandbox.Spec{}), "Docker defaults"},
		{SecurityText(spec), "all capabilities dropped, CHOWN SETUID added back; no-new-privileges; default seccomp; runtime runc"},
		{SecurityText(sandbox.Spec{Runtime: "runsc"}), "all capabilities dropped; no-new-privileges; default seccomp; runtime runsc"},
		{SecurityText(sandbox.Spec{Profile: "strict"}), "strict profile: read-only root, workdir and /tmp in memory, non-root user, no network; all capabilities dropped; no-new-privileges; default seccomp; runtime runc"},
		{SecurityText(sandbox.Spec{Profile: "standard"}), "standard profile; all capabilities dropped; no-new-privileges; default seccomp; runtime runc"},
		{NetworkText(""), "none (no network)"}, {NetworkText("bridge"), "bridge (internet access)"}, {NetworkText("host"), "host"},
		{PidsText(alpha), "4 of at most 256"}, {PidsText(beta), "none (not running)"},
		{SavedText(sandbox.CopyResult{Path: "/h/x", Files: 1, Bytes: 10}), "Saved 1 file (10 B) to /h/x."},
		{SavedText(sandbox.CopyResult{Path: "/h/d", Files: 3, Bytes: 4096, Skipped: []string{"link"}}), "Saved 3 files (4.0 KiB) to /h/d. Skipped 1 (symlinks or special files)."},
		{ExportText(sandbox.Export{Dir: "/h/e"}), "Saved the Dockerfile to /h/e."},
		{DefaultImageName("My Box_1"), "my-box_1:latest"},
		{DefaultImageName(""), "sandbox:latest"},
		{TimeText(t0, t0.Add(-90e9)), "2026-03-14 09:25:23 (1m ago)"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestInfoRows(t *testing.T) {
	rows := InfoRows(alpha, t0, "")
	want := map[string]string{
		"Image": "python:3.12-slim", "ID": alpha.ID, "Terminal": ExecCommand(alpha, ""),
		"Created": "2026-03-14 09:21:53 (5m ago)", "Last used": "2026-03-14 09:24:23 (2m ago)",
		"Owner": "claude-ai 0.1.0 · sess-aaaa-00", "Lifetime": "Ephemeral: removed after its session ends or it idles",
		"Network": "none (no network)", "Limits": "memory 512 MiB (no swap), 1 CPU, 256 processes", "Workdir": "/workspace",
		"Security": "all capabilities dropped; no-new-privileges; default seccomp; runtime runc",
		"Labels":   "io.sandtray.created=2026-03-14T09:21:53Z\nio.sandtray.image=python:3.12-slim\nio.sandtray.managed=true\nio.sandtray.name=alpha",
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	for _, name := range infoFields {
		if _, ok := rows[name]; !ok && !slices.Contains(viewRows, name) {
			t.Errorf("no row %q", name)
		}
	}
}

func TestActivityTexts(t *testing.T) {
	a := activityFixture()[1]
	if got, want := ActivityTitle(a), "09:24:53 · execute_code · python · exit 1 · 1.5 s · claude-ai 0.1.0"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
	want := "09:24:53 · execute_code · python · exit 1 · 1.5 s · claude-ai 0.1.0\n\n" +
		"import pandas\npandas.read_csv('x.csv')\n\n── stderr ──\nTraceback (most recent call last):\nFileNotFoundError: x.csv"
	if got := ActivityText(a); got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}
	failed := sandbox.Activity{Time: t0, Tool: "read_file", Input: "x", Error: "no such file"}
	if got, want := ActivityText(failed), "09:26:53 · read_file · failed\n\nx\n\nError: no such file"; got != want {
		t.Errorf("failed text %q, want %q", got, want)
	}
}

func TestMatchActivity(t *testing.T) {
	entries := control.Entries(activityFixture(), control.LogsQuery{})
	tests := []struct {
		q    string
		want []int
	}{
		{"", []int{0, 1, 2}}, {"  ", []int{0, 1, 2}}, {"PANDAS", []int{1}}, {"total 0", []int{2}},
		{"claude", []int{0, 1, 2}}, {"python", []int{0, 1}}, {"nothing like it", []int{}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, MatchActivity(entries, tt.q)); diff != "" {
			t.Errorf("MatchActivity(%q) (-want +got):\n%s", tt.q, diff)
		}
	}
}
