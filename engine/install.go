package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/internal/docker"
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

// InstallPackages installs packages in a sandbox with the image's package
// manager (req.Manager, or the one auto picks) as root, and records the exact
// versions installed in the sandbox's manifest. An offline sandbox gets the
// bridge network for the install only; it is offline again when this
// returns, whether the install worked, failed, timed out or was cancelled.
// Output lines stream to progress. A failed or timed-out install is an error
// wrapping sandbox.ErrInvalid that quotes the end of the output.
func (e *Engine) InstallPackages(ctx context.Context, owner sandbox.Owner, ref string, req sandbox.InstallRequest, progress sandbox.Progress) (sandbox.InstallResult, error) {
	if len(req.Packages) == 0 || len(req.Packages) > maxPackages {
		return sandbox.InstallResult{}, fmt.Errorf("give 1 to %d package names, e.g. [\"jq\"]: %w", maxPackages, sandbox.ErrInvalid)
	}
	timeout, err := e.timeoutFor(req.Timeout, true)
	if err != nil {
		return sandbox.InstallResult{}, err
	}
	b, err := e.ready(ctx, ref)
	if err != nil {
		return sandbox.InstallResult{}, err
	}
	defer e.release(b)
	unlock, err := lockInstall(ctx, b.id)
	if err != nil {
		return sandbox.InstallResult{}, err
	}
	defer unlock()
	m, err := e.chooseManager(ctx, b, req)
	if err != nil {
		return sandbox.InstallResult{}, err
	}
	for _, p := range req.Packages {
		if !m.valid.MatchString(p) {
			return sandbox.InstallResult{}, fmt.Errorf("%q is not a valid %s package name (names cannot start with '-' or hold spaces or shell characters): %w", p, m.name, sandbox.ErrInvalid)
		}
	}
	act := sandbox.Activity{Tool: "install_packages", Client: owner.Client, Input: m.name + " install " + strings.Join(req.Packages, " ")}
	res, out, err := e.install(ctx, b, m, req.Packages, timeout, progress)
	act.Duration, act.Stdout, act.Stderr, act.TimedOut = res.Duration.Milliseconds(), out.logOut, out.logErr, out.result.TimedOut
	if err != nil {
		act.Error = err.Error()
	} else {
		act.ExitCode = &out.result.ExitCode
	}
	e.record(b.id, act)
	return res, err
}

// install runs the manager with the network attached, then reads versions.
func (e *Engine) install(ctx context.Context, b *box, m packageManager, pkgs []string, timeout time.Duration, progress sandbox.Progress) (sandbox.InstallResult, runOutput, error) {
	res := sandbox.InstallResult{Manager: m.name, Installed: []sandbox.Package{}}
	restore, err := e.attachForInstall(ctx, b)
	if err != nil {
		return res, runOutput{}, err
	}
	if b.spec.Network == sandbox.NetworkNone {
		report(progress, 0, 0, "sandbox "+b.name+" is on the bridge network for the install")
	}
	lines := &lineProgress{fn: progress, max: e.cfg.Limits.OutputBytes}
	out, err := e.execute(ctx, b, run{
		cmd: append([]string{"/bin/sh", "-c", m.install, "sandtray-install"}, pkgs...),
		env: slices.Clone(m.env), user: installUser, workdir: "/", timeout: timeout, stream: lines,
	})
	if rerr := restore(); rerr != nil {
		err = errors.Join(err, rerr)
	}
	res.Output, res.Duration = lines.output(), out.result.Duration
	switch {
	case err != nil:
		return res, out, err
	case out.result.TimedOut:
		return res, out, fmt.Errorf("installing %s timed out after %s and was stopped; retry with a larger timeout (at most %s). The output ended with:\n%s: %w",
			strings.Join(pkgs, " "), timeout, e.cfg.Limits.MaxExecTimeout.Duration, lines.tail(errTail), sandbox.ErrInvalid)
	case out.result.ExitCode != 0:
		return res, out, fmt.Errorf("%s could not install %s (exit code %d); check the package names for this image. The output ended with:\n%s: %w",
			m.name, strings.Join(pkgs, " "), out.result.ExitCode, lines.tail(errTail), sandbox.ErrInvalid)
	}
	res.Installed, err = e.installedVersions(ctx, b, m, pkgs)
	if err != nil {
		return res, out, err
	}
	e.recordPackages(b, res.Installed)
	return res, out, nil
}

// installedVersions asks the package manager which versions it now has of
// pkgs. A name it does not report (an apt virtual package, say) is left out.
func (e *Engine) installedVersions(ctx context.Context, b *box, m packageManager, pkgs []string) ([]sandbox.Package, error) {
	names := make([]string, 0, len(pkgs))
	for _, p := range pkgs {
		if n := m.base(p); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var stdout bytes.Buffer
	_, err := e.docker.Exec(ctx, b.id, docker.ExecOptions{
		Cmd: append([]string{"/bin/sh", "-c", m.query, "sandtray-query"}, names...),
		Env: m.env, User: installUser, Stdout: &stdout, Stderr: io.Discard,
	})
	if err != nil {
		return nil, e.gone(b, fmt.Errorf("read installed versions in sandbox %s: %w", b.name, err))
	}
	versions := m.parse(stdout.String(), names)
	out := []sandbox.Package{}
	for _, n := range names {
		if v, ok := versions[n]; ok && validVersion.MatchString(v) {
			out = append(out, sandbox.Package{Manager: m.name, Name: n, Version: v})
		} else {
			e.log.Warn("no installed version found", "sandbox", b.name, "manager", m.name, "package", n)
		}
	}
	return out, nil
}

// recordPackages merges installed packages into the sandbox's manifest and
// saves it at once, so a crash right after an install keeps the record.
func (e *Engine) recordPackages(b *box, pkgs []sandbox.Package) {
	e.mu.Lock()
	b.state.Packages = mergePackages(b.state.Packages, pkgs)
	st := b.state
	_, live := e.boxes[b.id]
	e.mu.Unlock()
	if !live {
		return
	}
	if err := e.store.save(b.id, st); err != nil {
		e.log.Error("save package manifest", "sandbox", b.name, "err", err)
	}
}

// chooseManager resolves req.Manager against what the image has.
func (e *Engine) chooseManager(ctx context.Context, b *box, req sandbox.InstallRequest) (packageManager, error) {
	name := req.Manager
	if name != "" && name != sandbox.ManagerAuto {
		if _, ok := managerNamed(name); !ok {
			return packageManager{}, fmt.Errorf("manager %q is not known; use auto, apt, apk, pip or npm: %w", name, sandbox.ErrInvalid)
		}
	}
	have, err := e.availableManagers(ctx, b)
	if err != nil {
		return packageManager{}, err
	}
	if name == "" || name == sandbox.ManagerAuto {
		name = autoManager(have, b.spec.Language, req.Packages)
	}
	if name == "" {
		return packageManager{}, fmt.Errorf("image %s has no package manager Sandtray knows (apt-get, apk, pip, npm); create a sandbox from an image that has one: %w", b.spec.Image, sandbox.ErrUnsupported)
	}
	if !have[name] {
		return packageManager{}, fmt.Errorf("image %s has no %s; it has %s. Use one of those (manager=auto picks), or an image with %s: %w",
			b.spec.Image, name, listOr(have), name, sandbox.ErrUnsupported)
	}
	m, _ := managerNamed(name)
	return m, nil
}

// availableManagers looks for each manager's command in the sandbox.
func (e *Engine) availableManagers(ctx context.Context, b *box) (map[string]bool, error) {
	const probe = `for c in apt-get apk pip3 pip npm; do command -v "$c" >/dev/null 2>&1 && echo "$c"; done; true`
	var out bytes.Buffer
	if _, err := e.docker.Exec(ctx, b.id, docker.ExecOptions{Cmd: []string{"/bin/sh", "-c", probe}, Stdout: &out, Stderr: io.Discard}); err != nil {
		return nil, e.gone(b, fmt.Errorf("look for package managers in sandbox %s: %w", b.name, err))
	}
	have := map[string]bool{}
	for _, cmd := range strings.Fields(out.String()) {
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

// Packages returns a sandbox's package manifest: what install_packages
// installed, with exact versions, sorted by manager and name.
func (e *Engine) Packages(ctx context.Context, ref string) ([]sandbox.Package, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	b, err := e.lookup(ref)
	if err != nil {
		return nil, err
	}
	return append([]sandbox.Package{}, b.state.Packages...), nil
}
