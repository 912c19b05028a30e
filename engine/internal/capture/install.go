package capture

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// maxPackages caps one install request.
const maxPackages = 50

// errTail is how much of a failed install's output its error quotes.
const errTail = 2 << 10

// installUser is who package managers run as, whatever the sandbox's own
// user (sandbox.user) is: root, by number, so that it needs no /etc/passwd
// entry and no name the sandbox could have changed.
const installUser = "0:0"

// installPath is the PATH package managers run with as root when the image
// names none, whatever PATH the sandbox was given: a folder the sandbox's
// user can write must not choose what root runs.
const installPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// imagePath is the PATH the sandbox's image sets (the user chose the image;
// the model chose the sandbox's env), or installPath.
func (c *Capture) imagePath(ctx context.Context, t Target) string {
	if img, err := c.docker.InspectImage(ctx, t.Image); err == nil {
		for _, kv := range img.Env {
			if p, ok := strings.CutPrefix(kv, "PATH="); ok && p != "" {
				return p
			}
		}
	}
	return installPath
}

// installEnv is the environment of a root install exec: the image's PATH
// (see imagePath), HOME for root, every variable of the sandbox's own env (create_sandbox env) that
// makes the loader, a shell or an interpreter run other code set empty
// (Docker cannot unset a container's variable for one exec; empty, they do
// nothing), and the manager's own settings last.
func installEnv(t Target, path string, m packageManager) []string {
	env := []string{"PATH=" + path, "HOME=/root"}
	for _, k := range slices.Sorted(maps.Keys(t.Env)) {
		if k == "PATH" || k == "HOME" {
			continue
		}
		if strings.HasPrefix(k, "LD_") || strings.HasPrefix(k, "PYTHON") || slices.Contains(codeLoadingVars, k) ||
			strings.HasPrefix(k, "PIP_") || strings.HasPrefix(strings.ToLower(k), "npm_config_") {
			env = append(env, k+"=")
		}
	}
	return append(env, m.env...)
}

// codeLoadingVars make a shell or an interpreter load code of their naming.
var codeLoadingVars = []string{"BASH_ENV", "ENV", "NODE_OPTIONS", "NODE_PATH", "PERL5LIB", "PERL5OPT", "RUBYOPT", "GCONV_PATH", "APT_CONFIG"}

// CheckInstall refuses a request with no packages or too many.
func CheckInstall(req sandbox.InstallRequest) error {
	if len(req.Packages) == 0 || len(req.Packages) > maxPackages {
		return fmt.Errorf("give 1 to %d package names, e.g. [\"jq\"]: %w", maxPackages, sandbox.ErrInvalid)
	}
	return nil
}

// Install installs req's packages in t with the image's package manager
// (req.Manager, or the one auto picks) as root, through r, and returns the
// exact versions installed, for the sandbox's manifest. An offline sandbox
// gets the bridge network for the install only; it is offline again when
// this returns, whether the install worked, failed, timed out or was
// cancelled. Output lines stream to progress. A failed or timed-out install
// is an error wrapping sandbox.ErrInvalid that quotes the end of the
// output. Once the installer ran, t.Installed hears of the packages it
// installed, and log of the install's entry in the activity log.
func (c *Capture) Install(ctx context.Context, t Target, r Runner, req sandbox.InstallRequest, timeout time.Duration, progress sandbox.Progress, log func(sandbox.Activity)) (sandbox.InstallResult, error) {
	res, input, ran, err := c.runInstall(ctx, t, r, req, timeout, progress)
	if input == "" { // refused before it ran: nothing to log
		return res, err
	}
	if err == nil && t.Installed != nil {
		t.Installed(res.Installed)
	}
	act := sandbox.Activity{Tool: "install_packages", Input: input, Duration: res.Duration.Milliseconds(),
		Stdout: ran.LogOut, Stderr: ran.LogErr, TimedOut: ran.Result.TimedOut}
	if err != nil {
		act.Error = err.Error()
	} else {
		act.ExitCode = &ran.Result.ExitCode
	}
	log(act)
	return res, err
}

// runInstall is Install; input describes the install for the activity log
// ("" when it was refused before it ran), and ran is what the installer
// left (zero when it never ran).
func (c *Capture) runInstall(ctx context.Context, t Target, r Runner, req sandbox.InstallRequest, timeout time.Duration, progress sandbox.Progress) (res sandbox.InstallResult, input string, ran Ran, err error) {
	if err := c.checkWritableRoot(ctx, t); err != nil {
		return sandbox.InstallResult{}, "", Ran{}, err
	}
	m, err := c.chooseManager(ctx, t, req)
	if err != nil {
		return sandbox.InstallResult{}, "", Ran{}, err
	}
	for _, p := range req.Packages {
		if !m.valid.MatchString(p) {
			return sandbox.InstallResult{}, "", Ran{}, fmt.Errorf("%q is not a valid %s package name (names cannot start with '-' or hold spaces or shell characters): %w", p, m.name, sandbox.ErrInvalid)
		}
	}
	input = m.name + " install " + strings.Join(req.Packages, " ")
	res, ran, err = c.install(ctx, t, r, m, req.Packages, timeout, progress)
	return res, input, ran, err
}

// checkWritableRoot refuses an install in a sandbox of the strict profile:
// its root is read-only and it has no network, by the user's choice, so a
// package manager could not work there and must not go online for it.
func (c *Capture) checkWritableRoot(ctx context.Context, t Target) error {
	ctr, err := c.docker.Inspect(ctx, t.ID())
	if err != nil {
		return t.Gone(fmt.Errorf("inspect sandbox %s: %w", t.Name(), err))
	}
	if ctr.ReadOnlyRoot {
		return fmt.Errorf("sandbox %s runs in the strict profile (sandbox.profile = \"strict\" in the user's config): its root filesystem is read-only and it has no network, so packages cannot be installed in it. "+
			"Use what the image has, or create the sandbox from an image that already has the packages (ask the user to build one), or ask the user to use the standard profile: %w", t.Name(), sandbox.ErrForbidden)
	}
	return nil
}

// install runs the manager with the network attached, then reads versions.
func (c *Capture) install(ctx context.Context, t Target, r Runner, m packageManager, pkgs []string, timeout time.Duration, progress sandbox.Progress) (sandbox.InstallResult, Ran, error) {
	res := sandbox.InstallResult{Manager: m.name, Installed: []sandbox.Package{}}
	closeWindow, err := c.openWindow(ctx, t, progress)
	if err != nil {
		return res, Ran{}, err
	}
	env := installEnv(t, c.imagePath(ctx, t), m)
	if t.Network != sandbox.NetworkBridge {
		proxy, closeGate, err := c.openGate(ctx, t, m)
		if err != nil {
			return res, Ran{}, errors.Join(err, closeWindow(true))
		}
		defer closeGate()
		env = append(env, proxy...)
		report(progress, 0, 0, "sandbox "+t.Name()+" reaches "+strings.Join(m.hosts, ", ")+" through Sandtray's egress gate for the install, and nothing else; its other processes are stopped until it ends")
	}
	lines := &lineProgress{fn: progress, max: c.cfg.OutputBytes}
	out, err := r.Run(ctx, Exec{
		Cmd: append([]string{"/bin/sh", "-c", m.install, "sandtray-install"}, pkgs...),
		Env: env, User: installUser, Workdir: "/", Timeout: timeout, Stream: lines,
	})
	if cerr := closeWindow(true); cerr != nil {
		err = errors.Join(err, cerr)
	}
	res.Output, res.Duration = lines.output(), out.Result.Duration
	switch {
	case err != nil:
		return res, out, err
	case out.Result.Outcome.End != sandbox.Finished && !out.Result.TimedOut:
		return res, out, fmt.Errorf("installing %s was stopped: %s. The output ended with:\n%s: %w",
			strings.Join(pkgs, " "), strings.Join(out.Result.Outcome.Notes(), "; "), lines.tail(errTail), sandbox.ErrInvalid)
	case out.Result.TimedOut:
		return res, out, fmt.Errorf("installing %s timed out after %s and was stopped; retry with a larger timeout (at most %s). The output ended with:\n%s: %w",
			strings.Join(pkgs, " "), timeout, c.cfg.MaxTimeout, lines.tail(errTail), sandbox.ErrInvalid)
	case out.Result.ExitCode != 0:
		return res, out, fmt.Errorf("%s could not install %s (exit code %d); check the package names for this image. The output ended with:\n%s: %w",
			m.name, strings.Join(pkgs, " "), out.Result.ExitCode, lines.tail(errTail), sandbox.ErrInvalid)
	}
	res.Installed, err = c.installedVersions(ctx, t, m, pkgs)
	return res, out, err
}

// openGate opens t's way to m's package hosts through the egress gate,
// for this install only (no Docker network is attached at any point).
func (c *Capture) openGate(ctx context.Context, t Target, m packageManager) (env []string, closeGate func(), err error) {
	if t.Gate == nil {
		return nil, nil, fmt.Errorf("sandbox %s has no network and Sandtray cannot open the egress gate for its install: %w", t.Name(), sandbox.ErrUnsupported)
	}
	return t.Gate(ctx, m.hosts)
}

// installedVersions asks the package manager which versions it now has of
// pkgs. A name it does not report (an apt virtual package, say) is left out.
func (c *Capture) installedVersions(ctx context.Context, t Target, m packageManager, pkgs []string) ([]sandbox.Package, error) {
	names := make([]string, 0, len(pkgs))
	for _, p := range pkgs {
		if n := m.base(p); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	raw, err := c.docker.ExecAgent(ctx, t.ID(), installUser, append([]string{"versions", m.name}, names...), nil, maxVersionsOutput)
	if err != nil {
		return nil, t.Gone(fmt.Errorf("read installed versions in sandbox %s: %w", t.Name(), err))
	}
	versions := parseVersions(string(raw))
	out := []sandbox.Package{}
	for _, n := range names {
		if v, ok := versions[n]; ok && validVersion.MatchString(v) {
			out = append(out, sandbox.Package{Manager: m.name, Name: n, Version: v})
		} else {
			c.log.Warn("no installed version found", "sandbox", t.Name(), "manager", m.name, "package", n)
		}
	}
	return out, nil
}

// chooseManager resolves req.Manager against what the image has.
func (c *Capture) chooseManager(ctx context.Context, t Target, req sandbox.InstallRequest) (packageManager, error) {
	name := req.Manager
	if name != "" && name != sandbox.ManagerAuto {
		if _, ok := managerNamed(name); !ok {
			return packageManager{}, fmt.Errorf("manager %q is not known; use auto, apt, apk, pip or npm: %w", name, sandbox.ErrInvalid)
		}
	}
	have, err := c.availableManagers(ctx, t)
	if err != nil {
		return packageManager{}, err
	}
	if name == "" || name == sandbox.ManagerAuto {
		name = autoManager(have, t.Language, req.Packages)
	}
	if name == "" {
		return packageManager{}, fmt.Errorf("image %s has no package manager Sandtray knows (apt-get, apk, pip, npm); create a sandbox from an image that has one: %w", t.Image, sandbox.ErrUnsupported)
	}
	if !have[name] {
		return packageManager{}, fmt.Errorf("image %s has no %s; it has %s. Use one of those (manager=auto picks), or an image with %s: %w",
			t.Image, name, listOr(have), name, sandbox.ErrUnsupported)
	}
	m, _ := managerNamed(name)
	return m, nil
}

// availableManagers looks for each manager's command in the sandbox, where
// the install will look: the image's PATH (see imagePath).
func (c *Capture) availableManagers(ctx context.Context, t Target) (map[string]bool, error) {
	out, err := c.docker.ExecAgent(ctx, t.ID(), "", []string{"which", "--path=" + c.imagePath(ctx, t), "apt-get", "apk", "pip3", "pip", "npm"}, nil, 4<<10)
	if err != nil {
		return nil, t.Gone(fmt.Errorf("look for package managers in sandbox %s: %w", t.Name(), err))
	}
	have := map[string]bool{}
	for line := range strings.Lines(string(out)) {
		cmd, _, _ := strings.Cut(line, "\t")
		for _, m := range managers {
			if slices.Contains(strings.Fields(m.command), cmd) {
				have[m.name] = true
			}
		}
	}
	return have, nil
}

// autoManager picks a manager: pip or npm when the packages are written
// their way ("x==1", "@scope/x"), else the sandbox language's own, else the
// system's (apt, apk), else whatever there is.
func autoManager(have map[string]bool, language string, pkgs []string) string {
	for _, p := range pkgs {
		switch {
		case strings.ContainsAny(p, "<>!~[") || strings.Contains(p, "=="):
			return sandbox.ManagerPip
		case strings.Contains(p, "@"):
			return sandbox.ManagerNpm
		}
	}
	if language == "python" && have[sandbox.ManagerPip] {
		return sandbox.ManagerPip
	}
	if language == "javascript" && have[sandbox.ManagerNpm] {
		return sandbox.ManagerNpm
	}
	for _, m := range managers {
		if have[m.name] {
			return m.name
		}
	}
	return ""
}

func listOr(have map[string]bool) string {
	var names []string
	for _, m := range managers {
		if have[m.name] {
			names = append(names, m.name)
		}
	}
	if len(names) == 0 {
		return "none of apt, apk, pip, npm"
	}
	return strings.Join(names, " and ")
}
