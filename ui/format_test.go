package ui

import (
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestFormatBytes(t *testing.T) {
	tests := []struct {
		in   uint64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"},
		{96 << 20, "96.0 MiB"}, {512 << 20, "512 MiB"}, {2 << 30, "2.0 GiB"}, {5 << 40, "5.0 TiB"},
	}
	for _, tt := range tests {
		if got := FormatBytes(tt.in); got != tt.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFormatPercent(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{{0, "0.0%"}, {-3, "0.0%"}, {12.345, "12.3%"}, {99.94, "99.9%"}, {100, "100%"}, {250.4, "250%"}}
	for _, tt := range tests {
		if got := FormatPercent(tt.in); got != tt.want {
			t.Errorf("FormatPercent(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFormatMemory(t *testing.T) {
	if got := FormatMemory(sandbox.Stats{MemoryBytes: 96 << 20, MemoryLimit: 512 << 20}); got != "96.0 MiB / 512 MiB" {
		t.Errorf("with limit: %q", got)
	}
	if got := FormatMemory(sandbox.Stats{MemoryBytes: 2048}); got != "2.0 KiB" {
		t.Errorf("without limit: %q", got)
	}
}

func TestFormatAge(t *testing.T) {
	tests := []struct {
		ago  time.Duration
		want string
	}{
		{0, "now"}, {45 * time.Second, "45s"}, {5 * time.Minute, "5m"},
		{3*time.Hour + 20*time.Minute, "3h 20m"}, {50 * time.Hour, "2d 2h"}, {-time.Minute, "now"},
	}
	for _, tt := range tests {
		if got := FormatAge(t0, t0.Add(-tt.ago)); got != tt.want {
			t.Errorf("FormatAge(%v ago) = %q, want %q", tt.ago, got, tt.want)
		}
	}
	if got := FormatAge(t0, time.Time{}); got != "—" {
		t.Errorf("zero time: %q", got)
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		ms   int64
		want string
	}{{-1, "—"}, {0, "0 ms"}, {15, "15 ms"}, {1234, "1.2 s"}, {59_999, "60.0 s"}, {123_000, "2m 03s"}}
	for _, tt := range tests {
		if got := FormatDuration(tt.ms); got != tt.want {
			t.Errorf("FormatDuration(%d) = %q, want %q", tt.ms, got, tt.want)
		}
	}
}

func TestStatusText(t *testing.T) {
	tests := map[sandbox.Status]string{
		sandbox.StatusRunning: "Running", sandbox.StatusStopped: "Stopped", sandbox.StatusPaused: "Paused",
		sandbox.StatusMissing: "Missing", "": "—", "restarting": "Restarting",
	}
	for in, want := range tests {
		if got := StatusText(in); got != want {
			t.Errorf("StatusText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOwnerText(t *testing.T) {
	tests := []struct {
		in   sandbox.Owner
		want string
	}{
		{sandbox.Owner{}, "—"},
		{sandbox.Owner{Client: "claude-ai 0.1.0"}, "claude-ai 0.1.0"},
		{sandbox.Owner{Session: "0123456789abcdef"}, "session 0123456789ab"},
		{sandbox.Owner{Client: "Cursor 1.7", Session: "s1"}, "Cursor 1.7 · s1"},
	}
	for _, tt := range tests {
		if got := OwnerText(tt.in); got != tt.want {
			t.Errorf("OwnerText(%+v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestExecCommand(t *testing.T) {
	const sh = `sh -c 'command -v bash >/dev/null && exec bash; exec sh'`
	tests := []struct {
		info sandbox.Info
		host string
		want string
	}{
		{sandbox.Info{ID: "3fa9c2d1e8b7aa00ff", Spec: sandbox.Spec{Workdir: "/workspace"}}, "",
			"docker exec -it -w /workspace 3fa9c2d1e8b7 " + sh},
		{sandbox.Info{ID: "short", Spec: sandbox.Spec{User: "1000:1000", Workdir: "/home/my work"}}, "unix:///var/run/docker.sock",
			"docker exec -it -u 1000:1000 -w '/home/my work' short " + sh},
		{sandbox.Info{ID: "abc"}, "unix:///run/user/1000/podman/podman.sock",
			"docker -H unix:///run/user/1000/podman/podman.sock exec -it abc " + sh},
	}
	for _, tt := range tests {
		if got := ExecCommand(tt.info, tt.host); got != tt.want {
			t.Errorf("ExecCommand(%+v, %q) =\n%s\nwant\n%s", tt.info, tt.host, got, tt.want)
		}
	}
}

func TestExitText(t *testing.T) {
	zero, two := 0, 2
	tests := []struct {
		in   sandbox.Activity
		want string
	}{
		{sandbox.Activity{ExitCode: &zero}, "exit 0"},
		{sandbox.Activity{ExitCode: &two}, "exit 2"},
		{sandbox.Activity{ExitCode: &two, TimedOut: true}, "timed out"},
		{sandbox.Activity{Error: "no such file"}, "failed"},
		{sandbox.Activity{}, "ok"},
	}
	for _, tt := range tests {
		if got := ExitText(tt.in); got != tt.want {
			t.Errorf("ExitText(%+v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFirstLine(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"", 10, ""}, {"\n\n  ls -la \nmore", 10, "ls -la"}, {"abcdefghijkl", 5, "abcd…"}, {"héllo", 5, "héllo"},
	}
	for _, tt := range tests {
		if got := FirstLine(tt.in, tt.max); got != tt.want {
			t.Errorf("FirstLine(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

func TestStatusLineTexts(t *testing.T) {
	tests := []struct{ got, want string }{
		{DockerText(sandbox.DockerStatus{Connected: true, Version: "20.10.24", Host: "unix:///d.sock"}), "Docker connected · 20.10.24 · unix:///d.sock"},
		{DockerText(sandbox.DockerStatus{Connected: true, Version: "20.10.24", Host: "unix:///c.sock", HostSource: "Colima: the first that answered a ping"}),
			"Docker connected · 20.10.24 · unix:///c.sock (Colima: the first that answered a ping)"},
		{DockerText(sandbox.DockerStatus{Connected: true}), "Docker connected"},
		{DockerText(sandbox.DockerStatus{Error: "start Docker"}), "Docker disconnected: start Docker"},
		{DockerText(sandbox.DockerStatus{}), "Docker disconnected"},
		{ClientsText(0), "0 MCP clients"}, {ClientsText(1), "1 MCP client"}, {ClientsText(3), "3 MCP clients"},
		{RunningText(0), "No sandboxes running"}, {RunningText(1), "1 sandbox running"}, {RunningText(7), "7 sandboxes running"},
		{SocketText(""), "No MCP socket"}, {SocketText("/run/s.sock"), "Socket /run/s.sock"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
