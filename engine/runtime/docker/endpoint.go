package docker

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/sandtray/sandtray/engine/runtime"
)

// Endpoint is a Docker daemon to try, and why: runtime.Endpoint with what
// discovery needs besides.
type Endpoint struct {
	Host     string   // e.g. "unix:///var/run/docker.sock", "npipe:////./pipe/docker_engine", "ssh://me@box"
	Source   string   // where the address came from: "DOCKER_HOST", `docker context "colima"`, "Colima", …
	Why      string   // "set explicitly" or "the first that answered a ping"
	Skipped  []string // candidates tried before it, each with the reason it was passed over
	explicit bool     // the user named it (DOCKER_HOST, DOCKER_CONTEXT, docker.host): no fallback
	socket   string   // for a unix socket, its path: missing means skip without dialing
}

// public is the endpoint as the engine sees it.
func (e Endpoint) public() runtime.Endpoint {
	return runtime.Endpoint{Host: e.Host, Source: e.Source, Why: e.Why, Skipped: e.Skipped}
}

// String is the endpoint for a status line (see runtime.Endpoint.String).
func (e Endpoint) String() string { return e.public().String() }

// Local reports whether the daemon runs on this host (see runtime.Endpoint.Local).
func (e Endpoint) Local() bool { return e.public().Local() }

// discoveryEnv is what endpoint discovery reads of the machine; tests fake it.
type discoveryEnv struct {
	goos      string
	getenv    func(string) string
	home      string
	configDir string // the docker CLI's config dir ($DOCKER_CONFIG or ~/.docker)
}

// hostEnv is the real machine's discovery environment.
func hostEnv(goos string) discoveryEnv {
	home, _ := os.UserHomeDir()
	return discoveryEnv{goos: goos, getenv: os.Getenv, home: home, configDir: dockerConfigDir()}
}

// candidates lists the endpoints to try, in order: pinned (the config's
// docker.host), else DOCKER_HOST, else the current docker context and the
// known sockets of Docker Desktop, Colima, OrbStack, Rancher Desktop, Podman
// (rootless, rootful, machine), rootless Docker and the system socket. A
// pinned endpoint, DOCKER_HOST or DOCKER_CONTEXT is the only candidate: the
// user named it, so falling back to another daemon would be a surprise.
func candidates(env discoveryEnv, pinned string) []Endpoint {
	if pinned != "" {
		return []Endpoint{{Host: pinned, Source: "docker.host in config.toml", Why: "set explicitly", explicit: true}}
	}
	if h := env.getenv("DOCKER_HOST"); h != "" {
		return []Endpoint{{Host: h, Source: "DOCKER_HOST", Why: "set explicitly", explicit: true}}
	}
	var list []Endpoint
	if name, explicit := currentContext(env); name != "" && name != "default" {
		host := contextEndpoint(env.configDir, name)
		source := fmt.Sprintf("docker context %q", name)
		if explicit {
			if host == "" {
				host = "context-not-found://" + name
			}
			return []Endpoint{{Host: host, Source: source + " from DOCKER_CONTEXT", Why: "set explicitly", explicit: true}}
		}
		if host != "" {
			list = append(list, Endpoint{Host: host, Source: source})
		}
	}
	for _, s := range knownSockets(env) {
		if s.path == "" {
			list = append(list, Endpoint{Host: s.host, Source: s.source})
			continue
		}
		list = append(list, Endpoint{Host: "unix://" + s.path, Source: s.source, socket: s.path})
	}
	return dedupe(list)
}

// dedupe keeps the first of endpoints with the same address.
func dedupe(list []Endpoint) []Endpoint {
	seen := map[string]bool{}
	out := list[:0]
	for _, e := range list {
		if !seen[e.Host] {
			seen[e.Host] = true
			out = append(out, e)
		}
	}
	return out
}

// knownSocket is where a Docker-compatible engine listens by default: a
// unix socket path, or (path empty) an address such as a named pipe.
type knownSocket struct {
	source, path, host string
}

// knownSockets lists the engines' default sockets for env's OS, in the
// order they are tried (docs/install.md, "Which Docker Sandtray uses").
func knownSockets(env discoveryEnv) []knownSocket {
	if env.goos == "windows" {
		return []knownSocket{
			{source: "Docker Desktop (or Rancher Desktop)", host: "npipe:////./pipe/docker_engine"},
			{source: "Podman machine", host: "npipe:////./pipe/podman-machine-default"},
		}
	}
	h := env.home
	join := func(parts ...string) string {
		if h == "" {
			return ""
		}
		return filepath.Join(append([]string{h}, parts...)...)
	}
	colima := env.getenv("COLIMA_HOME")
	if colima == "" {
		colima = join(".colima")
	}
	xdgRuntime := env.getenv("XDG_RUNTIME_DIR")
	runtimeSock := func(parts ...string) string {
		if xdgRuntime == "" || !filepath.IsAbs(xdgRuntime) {
			return ""
		}
		return filepath.Join(append([]string{xdgRuntime}, parts...)...)
	}
	var list []knownSocket
	add := func(source, path string) {
		if path != "" {
			list = append(list, knownSocket{source: source, path: path})
		}
	}
	if env.goos == "darwin" {
		add("Docker Desktop", join(".docker", "run", "docker.sock"))
		add("Docker Desktop", join("Library", "Containers", "com.docker.docker", "Data", "docker.raw.sock"))
	} else {
		add("Docker Desktop", join(".docker", "desktop", "docker.sock"))
	}
	if colima != "" {
		add("Colima", filepath.Join(colima, "default", "docker.sock"))
	}
	add("Colima", join(".config", "colima", "default", "docker.sock"))
	if env.goos == "darwin" {
		add("OrbStack", join(".orbstack", "run", "docker.sock"))
	}
	add("Rancher Desktop", join(".rd", "docker.sock"))
	add("Podman (rootless)", runtimeSock("podman", "podman.sock"))
	if env.goos == "darwin" {
		add("Podman machine", join(".local", "share", "containers", "podman", "machine", "podman.sock"))
		add("Podman machine", join(".local", "share", "containers", "podman", "machine", "qemu", "podman.sock"))
		add("Podman machine", join(".local", "share", "containers", "podman", "machine", "applehv", "podman.sock"))
		if tmp := env.getenv("TMPDIR"); filepath.IsAbs(tmp) {
			add("Podman machine", filepath.Join(tmp, "podman", "podman-machine-default-api.sock"))
		}
	} else {
		add("Podman (rootful)", "/run/podman/podman.sock")
	}
	add("rootless Docker", runtimeSock("docker.sock"))
	add("the system socket", "/var/run/docker.sock")
	return list
}

// currentContext is the docker context the CLI would use: DOCKER_CONTEXT
// (explicit), else currentContext in the CLI's config.json.
func currentContext(env discoveryEnv) (name string, explicit bool) {
	if n := env.getenv("DOCKER_CONTEXT"); n != "" {
		return n, true
	}
	if env.configDir == "" {
		return "", false
	}
	var cfg struct {
		CurrentContext string `json:"currentContext"`
	}
	readJSON(filepath.Join(env.configDir, "config.json"), &cfg)
	return cfg.CurrentContext, false
}
