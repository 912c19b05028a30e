package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/app/install"
	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/serve/socket"
)

// checks is the report, in order. Add a line for a new check.
var checks = []check{
	checkConfig,
	checkRuntime,
	checkKubernetes,
	checkDocker,
	checkImage,
	checkGVisor,
	checkGPU,
	checkSocket,
	checkHTTP,
	checkPool,
	checkClients,
	checkRoots,
	checkSecrets,
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

// checkKubernetes reports the cluster's checks (kubernetes.Diagnose) when
// sandboxes run on one.
func checkKubernetes(_ context.Context, e *Env) []Line {
	var lines []Line
	for _, f := range e.Kubernetes {
		lines = append(lines, Line{Level(f.Level), f.Topic, f.Detail, f.Fix})
	}
	return lines
}

// checkRuntime says which container runtime the config chooses, where it
// is, and what it cannot do.
func checkRuntime(_ context.Context, e *Env) []Line {
	d := e.Docker
	name := cmpOr(d.Runtime, config.DefaultRuntime)
	why := "the default; [runtime] name in config.toml chooses another"
	if e.Config.Runtime.Name != "" {
		why = "[runtime] name in config.toml"
	}
	if d.Host == "" && errors.Is(d.Err, sandbox.ErrUnsupported) { // no such runtime in this program
		return []Line{{Fail, "runtime", d.Err.Error(), "set [runtime] name in config.toml to a runtime the message lists"}}
	}
	where := cmpOr(d.Host, "not reached")
	lines := []Line{{OK, "runtime", fmt.Sprintf("%s (%s), at %s", name, why, where), ""}}
	for _, lack := range d.Lacks {
		lines = append(lines, Line{Info, "runtime", lack, ""})
	}
	return lines
}

func checkDocker(_ context.Context, e *Env) []Line {
	d := e.Docker
	if d.Runtime != "" && d.Runtime != config.DefaultRuntime { // checkRuntime's line says it all
		return nil
	}
	if d.Host == "" {
		return []Line{dockerDown(d)}
	}
	where := fmt.Sprintf("%s (%s)", d.Host, d.Source)
	if d.Err != nil && d.Version == "" {
		return []Line{{Fail, "docker", where + " answers a ping but not more", "restart the Docker engine"}}
	}
	detail := fmt.Sprintf("%s: %s %s, API %s, storage %s", where, cmpOr(d.Product, "Docker"),
		d.Version, d.API, cmpOr(d.StorageDriver, "?"))
	if len(d.PassedOver) > 0 {
		detail += fmt.Sprintf("; %d other endpoint(s) did not answer", len(d.PassedOver))
	}
	lines := []Line{{OK, "docker", detail, ""}}
	if d.Remote {
		lines = append(lines, Line{Info, "docker", "a remote engine: disk use is measured by Docker's size count, not on this host's disk", ""})
	}
	return lines
}

func checkImage(_ context.Context, e *Env) []Line {
	if e.Config.RuntimeName() == config.RuntimeKubernetes {
		return nil // the cluster's checks have its line
	}
	d := e.Docker
	switch {
	case d.Host == "" || d.Version == "":
		return []Line{{Info, "image", d.Image + ": not checked (no Docker)", ""}}
	case d.Err != nil:
		return []Line{{Warn, "image", d.Image + ": Docker did not say whether it has it", "`docker image inspect " + d.Image + "` shows why"}}
	case !d.ImagePresent && d.Image == engine.BuiltinImage:
		return []Line{{Warn, "image", d.Image + ": not built yet (the first sandbox builds it: a few minutes)", "`sandtray image build` builds it now"}}
	case !d.ImagePresent:
		return []Line{{Warn, "image", d.Image + ": not on this Docker, and Sandtray cannot build it", "`docker pull " + d.Image + "`, or set default_image back to " + engine.BuiltinImage}}
	}
	return []Line{{OK, "image", d.Image + ": present", ""}}
}

// dockerDown is the docker line when no engine answers: what was tried, in
// short, and the one fix for this OS.
func dockerDown(d engine.DockerProbe) Line {
	if d.Pinned != "" && len(d.Tried) == 1 {
		return Line{Fail, "docker", fmt.Sprintf("no Docker engine answers at %s (%s)", d.Tried[0].Host, d.Pinned), unpin(d.Pinned)}
	}
	if len(d.Tried) == 0 {
		return Line{Fail, "docker", "no Docker engine found", startDocker(thisOS, haveDockerCLI())}
	}
	hosts := make([]string, len(d.Tried))
	for i, t := range d.Tried {
		hosts[i] = t.Host
	}
	return Line{Fail, "docker", "no Docker engine answers at " + strings.Join(hosts, ", "), startDocker(thisOS, true)}
}

func checkGVisor(_ context.Context, e *Env) []Line {
	if e.Config.RuntimeName() == config.RuntimeKubernetes {
		return nil // kubernetes.runtime_class: the cluster's checks have its line
	}
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
	level := OK
	switch {
	case in.Answers:
		detail += "; Sandtray answers there"
	case e.Docker.Host == "":
		level, detail = Info, detail+"; no engine running (it cannot start without Docker)"
	case in.Exists:
		level, detail = Info, detail+"; no engine running (a stale socket: the next start replaces it)"
	default:
		level, detail = Info, detail+"; no engine running (sandtray-mcp starts one when an assistant connects)"
	}
	if in.Exists && in.Owner >= 0 && (in.Owner != os.Getuid() || in.Mode&0o077 != 0) {
		return []Line{{Fail, "socket", detail, "stop whatever made it and remove " + in.Path}}
	}
	return []Line{{level, "socket", detail, ""}}
}

func checkClients(_ context.Context, e *Env) []Line {
	var lines []Line
	for _, st := range install.Inspect(e.Clients) {
		lines = append(lines, clientLine(st))
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
	if len(missing) > 0 && slices.Equal(e.Config.Host.AllowedRoots, config.Default().Host.AllowedRoots) {
		return []Line{{Info, "roots", strings.Join(missing, ", ") + ": made when Sandtray starts", ""}}
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
