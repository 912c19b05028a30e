package doctor

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine"
)

func TestReportFailsOnlyOnFail(t *testing.T) {
	r := Report{Lines: []Line{{OK, "docker", "fine", ""}, {Warn, "image", "absent", "docker pull x"}, {Info, "gvisor", "not installed", "never shown"}}}
	if !r.OK() {
		t.Error("a warning made the report fail; only FAIL lines mean Sandtray cannot work")
	}
	s := r.String()
	if !strings.Contains(s, "warn  image    absent — fix: docker pull x") || strings.Contains(s, "never shown") {
		t.Errorf("report:\n%s", s)
	}
	r.Lines = append(r.Lines, Line{Fail, "docker", "gone", "start it"})
	if r.OK() || !strings.Contains(r.String(), "FAIL  docker   gone — fix: start it") {
		t.Errorf("a FAIL line: OK %v\n%s", r.OK(), r.String())
	}
}

func TestGVisorCheck(t *testing.T) {
	tests := []struct {
		runtime  string
		runtimes []string
		want     Level
	}{
		{"", []string{"runc"}, Info},
		{"", []string{"runc", "runsc"}, Info},
		{"runsc", []string{"runc", "runsc"}, OK},
		{"runsc", []string{"runc"}, Fail}, // configured but missing: every create would fail
	}
	for _, tc := range tests {
		e := &Env{Config: engine.DefaultConfig(), Docker: engine.DockerProbe{Version: "20.10", Runtimes: tc.runtimes}}
		e.Config.Sandbox.Runtime = tc.runtime
		if got := checkGVisor(context.Background(), e)[0]; got.Level != tc.want {
			t.Errorf("runtime %q with %v: %+v, want level %d", tc.runtime, tc.runtimes, got, tc.want)
		}
	}
}

func TestSocketCheckRefusesASharedDirectory(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the Windows endpoint is a named pipe: no directory")
	}
	dir := filepath.Join(t.TempDir(), "sandtray")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	e := &Env{SocketPath: filepath.Join(dir, "mcp.sock")}
	got := checkSocket(context.Background(), e)[0]
	if got.Level != Fail || !strings.Contains(got.Detail, "0700") {
		t.Errorf("socket in a world-writable directory: %+v, want FAIL naming the mode to set", got)
	}
	os.Chmod(dir, 0o700)
	if got := checkSocket(context.Background(), e)[0]; got.Level != OK || !strings.Contains(got.Detail, "no engine running") {
		t.Errorf("socket in a private directory, no engine: %+v", got)
	}
}
