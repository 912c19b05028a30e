package docker

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// fakeEnv is a machine with nothing set but what a test says: its own home
// and docker config dir.
func fakeEnv(t *testing.T, goos string, vars map[string]string) discoveryEnv {
	home := t.TempDir()
	return discoveryEnv{goos: goos, home: home, configDir: filepath.Join(home, ".docker"),
		getenv: func(k string) string { return vars[k] }}
}

func hosts(list []Endpoint) []string {
	var out []string
	for _, e := range list {
		out = append(out, e.Source+" "+e.Host)
	}
	return out
}

func TestCandidatesOrder(t *testing.T) {
	tests := []struct {
		goos string
		vars map[string]string
		want []string // with HOME standing for the fake home
	}{
		{"linux", map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000"}, []string{
			"Docker Desktop unix://HOME/.docker/desktop/docker.sock",
			"Colima unix://HOME/.colima/default/docker.sock",
			"Colima unix://HOME/.config/colima/default/docker.sock",
			"Rancher Desktop unix://HOME/.rd/docker.sock",
			"Podman (rootless) unix:///run/user/1000/podman/podman.sock",
			"Podman (rootful) unix:///run/podman/podman.sock",
			"rootless Docker unix:///run/user/1000/docker.sock",
			"the system socket unix:///var/run/docker.sock",
		}},
		{"darwin", map[string]string{"TMPDIR": "/var/folders/xy/T", "COLIMA_HOME": "/opt/colima"}, []string{
			"Docker Desktop unix://HOME/.docker/run/docker.sock",
			"Docker Desktop unix://HOME/Library/Containers/com.docker.docker/Data/docker.raw.sock",
			"Colima unix:///opt/colima/default/docker.sock",
			"Colima unix://HOME/.config/colima/default/docker.sock",
			"OrbStack unix://HOME/.orbstack/run/docker.sock",
			"Rancher Desktop unix://HOME/.rd/docker.sock",
			"Podman machine unix://HOME/.local/share/containers/podman/machine/podman.sock",
			"Podman machine unix://HOME/.local/share/containers/podman/machine/qemu/podman.sock",
			"Podman machine unix://HOME/.local/share/containers/podman/machine/applehv/podman.sock",
			"Podman machine unix:///var/folders/xy/T/podman/podman-machine-default-api.sock",
			"the system socket unix:///var/run/docker.sock",
		}},
		{"windows", nil, []string{
			"Docker Desktop (or Rancher Desktop) npipe:////./pipe/docker_engine",
			"Podman machine npipe:////./pipe/podman-machine-default",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.goos, func(t *testing.T) {
			env := fakeEnv(t, tc.goos, tc.vars)
			got := hosts(candidates(env, ""))
			for i := range got {
				got[i] = strings.ReplaceAll(got[i], env.home, "HOME")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("candidates (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExplicitEndpointIsTheOnlyCandidate(t *testing.T) {
	tests := []struct {
		name   string
		vars   map[string]string
		pinned string
		want   string
	}{
		{"pinned beats DOCKER_HOST", map[string]string{"DOCKER_HOST": "tcp://a:2375"}, "ssh://me@box", "docker.host in config.toml ssh://me@box"},
		{"DOCKER_HOST", map[string]string{"DOCKER_HOST": "tcp://a:2375", "DOCKER_CONTEXT": "remote"}, "", "DOCKER_HOST tcp://a:2375"},
		{"DOCKER_CONTEXT", map[string]string{"DOCKER_CONTEXT": "remote"}, "", `docker context "remote" from DOCKER_CONTEXT ssh://me@remote`},
		{"DOCKER_CONTEXT that does not exist", map[string]string{"DOCKER_CONTEXT": "gone"}, "", `docker context "gone" from DOCKER_CONTEXT context-not-found://gone`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := fakeEnv(t, "linux", tc.vars)
			writeContext(t, env.configDir, "remote", "ssh://me@remote")
			got := candidates(env, tc.pinned)
			if len(got) != 1 || !got[0].explicit || hosts(got)[0] != tc.want {
				t.Errorf("candidates = %q (explicit %v), want only %q", hosts(got), len(got) == 1 && got[0].explicit, tc.want)
			}
		})
	}
}

func TestCurrentContextComesFirstAndFallsBack(t *testing.T) {
	tests := []struct {
		name   string
		config string // config.json; "" writes none
		want   string // the first candidate's source; "" means a known socket comes first
	}{
		{"current context", `{"currentContext":"colima"}`, `docker context "colima"`},
		{"default context", `{"currentContext":"default"}`, ""},
		{"no current context", `{}`, ""},
		{"unknown context", `{"currentContext":"gone"}`, ""},
		{"no config file", "", ""},
		{"malformed config", `{`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := fakeEnv(t, "darwin", nil)
			writeContext(t, env.configDir, "colima", "unix:///somewhere/colima.sock")
			if tc.config != "" {
				writeFile(t, filepath.Join(env.configDir, "config.json"), tc.config)
			}
			list := candidates(env, "")
			first := list[0]
			if tc.want == "" {
				if strings.HasPrefix(first.Source, "docker context") {
					t.Errorf("first candidate %s, want a known socket", first)
				}
				return
			}
			if first.Source != tc.want || first.Host != "unix:///somewhere/colima.sock" || first.explicit {
				t.Errorf("first candidate %+v, want %s, not explicit (a stale context falls back)", first, tc.want)
			}
		})
	}
}

// fakeDaemon answers Docker's ping on a unix socket at path, like a daemon
// of API 1.41: a stand-in for an installed engine, not a mock of the SDK.
func fakeDaemon(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Api-Version", "1.41")
		if strings.HasSuffix(r.URL.Path, "/_ping") {
			w.Write([]byte("OK"))
			return
		}
		http.NotFound(w, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// deadSocket leaves a socket file nobody listens on, as a crashed engine does.
func deadSocket(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
}

func TestConnectPicksTheFirstThatAnswers(t *testing.T) {
	env := fakeEnv(t, "darwin", nil)
	// A home with a stopped Docker Desktop (its socket left behind), a
	// stale current context, a running Colima and a running OrbStack.
	deadSocket(t, filepath.Join(env.home, ".docker", "run", "docker.sock"))
	writeContext(t, env.configDir, "old", "unix://"+filepath.Join(env.home, "old.sock"))
	writeFile(t, filepath.Join(env.configDir, "config.json"), `{"currentContext":"old"}`)
	colima := filepath.Join(env.home, ".colima", "default", "docker.sock")
	fakeDaemon(t, colima)
	fakeDaemon(t, filepath.Join(env.home, ".orbstack", "run", "docker.sock"))

	c, err := connect(t.Context(), env, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ep := c.Endpoint()
	if ep.Host != "unix://"+colima || ep.Source != "Colima" {
		t.Errorf("chose %s, want Colima's socket %s", ep, colima)
	}
	if len(ep.Skipped) != 2 || !strings.Contains(ep.Skipped[0], `docker context "old"`) || !strings.Contains(ep.Skipped[1], "Docker Desktop") {
		t.Errorf("skipped %q, want the stale context then Docker Desktop's dead socket, each with its reason", ep.Skipped)
	}
	if c.Host() != "unix://"+colima || ep.Why != "the first that answered a ping" {
		t.Errorf("Host() = %q, Why = %q; want the socket, and why it was chosen", c.Host(), ep.Why)
	}
}

func TestConnectWithNothingInstalledSaysWhatToDo(t *testing.T) {
	env := fakeEnv(t, "darwin", nil)
	_, err := connect(t.Context(), env, "unix://"+filepath.Join(env.home, "nothing.sock"))
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "docker.host in config.toml") {
		t.Errorf("pinned to nothing: err = %v, want ErrUnavailable naming docker.host", err)
	}
	// Nothing installed but a socket left by a stopped engine (the system
	// socket aside: this machine's own daemon).
	list := candidates(env, "")
	_, err = connectFirst(t.Context(), list[:len(list)-1])
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "no Docker socket was found") ||
		!strings.Contains(err.Error(), "start Docker Desktop, Colima") {
		t.Errorf("nothing installed: err = %v, want ErrUnavailable saying no socket was found and what to start", err)
	}
	orb := filepath.Join(env.home, ".orbstack", "run", "docker.sock")
	deadSocket(t, orb)
	_, err = connectFirst(t.Context(), list[:len(list)-1])
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "tried unix://"+orb+" (OrbStack): Cannot connect") {
		t.Errorf("a stopped OrbStack: err = %v, want ErrUnavailable naming its socket and why", err)
	}
}

func TestConnectDoesNotFallBackFromDockerHost(t *testing.T) {
	env := fakeEnv(t, "darwin", map[string]string{"DOCKER_HOST": "unix:///nonexistent/docker.sock"})
	fakeDaemon(t, filepath.Join(env.home, ".colima", "default", "docker.sock"))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	c, err := connect(ctx, env, "")
	if err == nil {
		c.Close()
		t.Fatalf("connected to %s although DOCKER_HOST names a daemon that is not there", c.Endpoint())
	}
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "DOCKER_HOST") || !strings.Contains(err.Error(), "unix:///nonexistent/docker.sock") {
		t.Errorf("err = %v, want ErrUnavailable naming DOCKER_HOST and its value", err)
	}
}
