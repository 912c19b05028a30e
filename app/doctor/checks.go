package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/sandtray/sandtray/app/install"
	"github.com/sandtray/sandtray/engine/socket"
)

// checks is the report, in order. Add a line for a new check.
var checks = []check{
	checkConfig,
	checkDocker,
	checkImage,
	checkGVisor,
	checkGPU,
	checkSocket,
	checkHTTP,
	checkPool,
	checkClients,
	checkRoots,
}

func checkConfig(_ context.Context, e *Env) []Line {
	if e.ConfigErr != nil {
		return []Line{{Fail, "config", fmt.Sprintf("%s: %v", e.ConfigPath, e.ConfigErr),
			"correct the key the message names, or move the file away to use the defaults"}}
	}
	if _, err := os.Stat(e.ConfigPath); errors.Is(err, fs.ErrNotExist) {
		return []Line{{OK, "config", e.ConfigPath + ": none, the defaults apply", ""}}
	}
	return []Line{{OK, "config", e.ConfigPath + ": valid", ""}}
}

func checkDocker(_ context.Context, e *Env) []Line {
	d := e.Docker
	if d.Host == "" {
		return []Line{{Fail, "docker", fmt.Sprintf("no Docker engine answers: %v", d.Err),
			"start Docker Desktop, Colima, OrbStack, Rancher Desktop, Podman or the Docker service; if DOCKER_HOST or docker.host is set, point it at a running engine or unset it"}}
	}
	where := fmt.Sprintf("%s (%s: %s)", d.Host, d.Source, d.Why)
	if d.Err != nil && d.Version == "" {
		return []Line{{Fail, "docker", fmt.Sprintf("%s answers a ping but not more: %v", where, d.Err),
			"restart the Docker engine"}}
	}
	detail := fmt.Sprintf("%s; %s %s, API %s, storage %s, runtimes %s", where, cmpOr(d.Product, "Docker"),
		d.Version, d.API, cmpOr(d.StorageDriver, "?"), strings.Join(d.Runtimes, ", "))
	if len(d.PassedOver) > 0 {
		detail += "; passed over: " + strings.Join(d.PassedOver, "; ")
	}
	lines := []Line{{OK, "docker", detail, ""}}
	if d.Remote {
		lines = append(lines, Line{Info, "docker", "a remote engine: disk use is measured by Docker's size count, not on this host's disk", ""})
	}
	return lines
}

func checkImage(_ context.Context, e *Env) []Line {
	d := e.Docker
	switch {
	case d.Host == "" || d.Version == "":
		return []Line{{Info, "image", d.Image + ": not checked, no Docker", ""}}
	case d.Err != nil:
		return []Line{{Warn, "image", fmt.Sprintf("%s: cannot tell whether it is present: %v", d.Image, d.Err), "docker image inspect " + d.Image}}
	case !d.ImagePresent:
		return []Line{{Warn, "image", d.Image + ": not present; the first sandbox pulls it (slow, and fails without a registry)",
			"docker pull " + d.Image + ", or set default_image in config.toml to an image you have"}}
	}
	return []Line{{OK, "image", d.Image + ": present", ""}}
}

func checkGVisor(_ context.Context, e *Env) []Line {
	want := e.Config.Sandbox.Runtime
	has := slices.Contains(e.Docker.Runtimes, "runsc")
	switch {
	case want != "" && e.Docker.Version != "" && !slices.Contains(e.Docker.Runtimes, want):
		return []Line{{Fail, "gvisor", fmt.Sprintf("sandbox.runtime is %q but the engine has only %s", want, strings.Join(e.Docker.Runtimes, ", ")),
			"install gVisor (runsc install; restart Docker) or remove sandbox.runtime from config.toml"}}
	case want == "runsc":
		return []Line{{OK, "gvisor", "sandboxes run under gVisor (runsc)", ""}}
	case has:
		return []Line{{Info, "gvisor", `runsc is installed but not used; set sandbox.runtime = "runsc" for a stronger boundary`, ""}}
	}
	return []Line{{Info, "gvisor", "not installed (optional: a user-space kernel between sandboxes and the host)", ""}}
}

func checkSocket(ctx context.Context, e *Env) []Line {
	if e.SocketErr != nil {
		return []Line{{Fail, "socket", e.SocketErr.Error(), "set " + socket.EnvSocket + " to a path in a private directory"}}
	}
	in := socket.Describe(ctx, e.SocketPath)
	if in.DirErr != nil {
		return []Line{{Fail, "socket", in.DirErr.Error(), "fix the directory as the message says; Sandtray will not serve from a shared one"}}
	}
	detail := in.Path
	if in.Exists && in.Owner >= 0 {
		detail += fmt.Sprintf(": owner uid %d, mode %#o", in.Owner, in.Mode)
	}
	switch {
	case in.Answers:
		detail += "; an engine answers"
	case in.Exists:
		detail += "; nothing answers (left by an engine that stopped; the next start replaces it)"
	default:
		detail += "; no engine running (sandtray-mcp starts one)"
	}
	if in.Exists && in.Owner >= 0 && (in.Owner != os.Getuid() || in.Mode&0o077 != 0) {
		return []Line{{Fail, "socket", detail, "stop whatever made it and remove " + in.Path}}
	}
	return []Line{{OK, "socket", detail, ""}}
}

func checkClients(context.Context, *Env) []Line {
	var lines []Line
	for _, st := range install.Inspect(install.Options{}) {
		topic := "client"
		switch {
		case st.Err != nil:
			lines = append(lines, Line{Warn, topic, fmt.Sprintf("%s: %v", st.App, st.Err), "sandtray install " + st.Client + " --print, and add the entry by hand"})
		case st.Connected && !executable(st.Command):
			lines = append(lines, Line{Fail, topic, fmt.Sprintf("%s (%s): Sandtray's entry runs %s, which does not exist", st.App, st.Path, st.Command),
				"sandtray install " + st.Client})
		case st.Connected:
			lines = append(lines, Line{OK, topic, fmt.Sprintf("%s (%s): Sandtray is in it, %s exists", st.App, st.Path, st.Command), ""})
		case st.Installed:
			lines = append(lines, Line{Info, topic, fmt.Sprintf("%s (%s): installed, Sandtray not added (sandtray install %s)", st.App, st.Path, st.Client), ""})
		default:
			lines = append(lines, Line{Info, topic, st.App + ": not installed", ""})
		}
	}
	return lines
}

func checkRoots(_ context.Context, e *Env) []Line {
	roots := e.Config.Host.ExpandedRoots()
	if len(roots) == 0 {
		return []Line{{Info, "roots", "no host folders allowed: copy_to_sandbox and copy_from_sandbox are off", ""}}
	}
	var ok, missing []string
	for _, p := range roots {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			ok = append(ok, p)
		} else {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return []Line{{Warn, "roots", "host folders that do not exist: " + strings.Join(missing, ", "),
			"create them, or change host.allowed_roots in config.toml"}}
	}
	return []Line{{OK, "roots", "host folders copies may use: " + strings.Join(ok, ", "), ""}}
}

// executable reports whether path names an existing regular file.
func executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

func cmpOr(v, fallback string) string {
	if v == "" {
		return fallback
	}
	return v
}
