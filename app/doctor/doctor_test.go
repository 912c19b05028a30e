package doctor

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/app/install"
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
		e := &Env{Config: config.Default(), Docker: engine.DockerProbe{Version: "20.10", Runtimes: tc.runtimes}}
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
	e.Docker.Host = "unix:///var/run/docker.sock"
	if got := checkSocket(context.Background(), e)[0]; got.Level != Info || !strings.Contains(got.Detail, "sandtray-mcp starts one") {
		t.Errorf("socket in a private directory, no engine: %+v", got)
	}
}

// TestDockerDownSaysOneThingForThisOS: with no engine, the docker line
// names what was tried in short and gives the one fix for this OS, the
// engine it was pinned to first.
func TestDockerDownSaysOneThingForThisOS(t *testing.T) {
	defer func(os string) { thisOS = os }(thisOS)
	cases := []struct {
		goos   string
		probe  engine.DockerProbe
		detail string
		fix    string
	}{
		{"linux", engine.DockerProbe{}, "no Docker engine found", "Docker"},
		{"linux", engine.DockerProbe{Tried: []engine.DockerTried{{Host: "unix:///var/run/docker.sock", Source: "the system socket"}}},
			"no Docker engine answers at unix:///var/run/docker.sock", "start Docker: `sudo systemctl start docker`"},
		{"darwin", engine.DockerProbe{Tried: []engine.DockerTried{{Host: "unix:///Users/me/.docker/run/docker.sock"}}},
			"no Docker engine answers at unix:///Users/me/.docker/run/docker.sock", "start Docker Desktop (or `colima start`)"},
		{"windows", engine.DockerProbe{}, "no Docker engine found", "start Docker Desktop"},
		{"linux", engine.DockerProbe{Pinned: "docker.host in config.toml", Tried: []engine.DockerTried{{Host: "tcp://box:2375"}}},
			"no Docker engine answers at tcp://box:2375 (docker.host in config.toml)", "start the engine it names, or remove docker.host from config.toml"},
	}
	for _, c := range cases {
		thisOS = c.goos
		got := checkDocker(context.Background(), &Env{Docker: c.probe})
		if len(got) != 1 || got[0].Level != Fail || got[0].Detail != c.detail || !strings.Contains(got[0].Fix, c.fix) {
			t.Errorf("%s, %+v: %+v; want %q with a fix saying %q", c.goos, c.probe, got, c.detail, c.fix)
		}
		if c.goos == "linux" && strings.Contains(got[0].Fix, "Desktop") {
			t.Errorf("a Linux fix names a macOS engine: %s", got[0].Fix)
		}
	}
}

// TestClientLinesSayWhatToDo: a client whose app is missing says so; one
// that is installed but lacks Sandtray says the command that connects it.
func TestClientLinesSayWhatToDo(t *testing.T) {
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	lines := checkClients(context.Background(), &Env{Clients: installOptions(home)})
	got := map[string]Line{}
	for _, l := range lines {
		name, _, _ := strings.Cut(l.Detail, ":")
		got[name] = l
	}
	if l := got["Claude Code"]; l.Detail != "Claude Code: not connected — run `sandtray install claude-code`" {
		t.Errorf("installed, not connected: %+v", l)
	}
	if l := got["Cursor"]; l.Detail != "Cursor: app not found" || l.Level != Info {
		t.Errorf("not installed: %+v", l)
	}
}

func installOptions(home string) install.Options {
	return install.Options{Home: home, ShimPath: "/opt/sandtray/sandtray-mcp", GOOS: "linux"}
}
