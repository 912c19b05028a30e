package capture

import (
	"regexp"
	"strings"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// packageManager is what install_packages knows about one package manager.
// Package names reach it only as argv after the script (never inside a shell
// string), and each must match valid first, so none can start with '-'.
type packageManager struct {
	name    string         // sandbox.ManagerApt, ...
	command string         // what the image must have (command -v)
	valid   *regexp.Regexp // one requested package, optionally pinned
	install string         // sh script; the packages are "$@"
	env     []string
	// hosts are the package indexes the manager reaches: all an install
	// into a sandbox without the bridge network may reach, for that call.
	hosts []string
	base  func(pkg string) string // the name without pin or extras
}

// aptScript runs apt-get as root without capabilities: APT::Sandbox::User=root
// keeps apt from switching to _apt (setgroups needs a capability), and partial
// folders that an earlier apt left owned by _apt (mode 0700) are removed while
// empty, because root without CAP_DAC_OVERRIDE cannot enter them.
const aptScript = `set -e
for d in /var/lib/apt/lists/partial /var/cache/apt/archives/partial; do
  if [ -d "$d" ] && [ ! -O "$d" ]; then rmdir "$d" 2>/dev/null || true; fi
done
apt-get -o APT::Sandbox::User=root -q update
apt-get -o APT::Sandbox::User=root -q install -y --no-install-recommends "$@"
apt-get -o APT::Sandbox::User=root clean`

// pipCommand picks pip3 over pip, as Debian and most images name it.
const pipCommand = `if command -v pip3 >/dev/null 2>&1; then pip=pip3; else pip=pip; fi; `

var managers = []packageManager{
	{
		name: sandbox.ManagerApt, command: "apt-get",
		valid:   regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+(:[a-z0-9-]+)?(=[A-Za-z0-9.+~:_-]+)?$`),
		install: aptScript,
		env:     []string{"DEBIAN_FRONTEND=noninteractive"},
		hosts:   []string{"deb.debian.org", "security.debian.org", "archive.ubuntu.com", "security.ubuntu.com", "ports.ubuntu.com"},
		base:    func(p string) string { return cutAny(cutAny(p, "="), ":") },
	},
	{
		name: sandbox.ManagerApk, command: "apk",
		valid:   regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9+._-]*(=[A-Za-z0-9._+-]+)?$`),
		install: `apk add --no-cache --no-progress "$@"`,
		hosts:   []string{"dl-cdn.alpinelinux.org"},
		base:    func(p string) string { return cutAny(p, "=") },
	},
	{
		name: sandbox.ManagerPip, command: "pip3 pip",
		valid: regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?(\[[A-Za-z0-9._,-]+\])?((==|>=|<=|~=|!=|<|>)[A-Za-z0-9.*+!_-]+)?$`),
		// PIP_BREAK_SYSTEM_PACKAGES only matters where the image has Debian's
		// EXTERNALLY-MANAGED marker: a sandbox is the user's to change.
		install: pipCommand + `"$pip" install "$@"`,
		env: []string{"PIP_BREAK_SYSTEM_PACKAGES=1", "PIP_NO_INPUT=1", "PIP_DISABLE_PIP_VERSION_CHECK=1",
			"PIP_ROOT_USER_ACTION=ignore"},
		hosts: []string{"pypi.org", "files.pythonhosted.org"},
		base:  func(p string) string { return cutAny(p, "[=<>~!") },
	},
	{
		name: sandbox.ManagerNpm, command: "npm",
		valid:   regexp.MustCompile(`^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*(@[A-Za-z0-9.^~<>=*+_-]+)?$`),
		install: `npm install -g --no-fund --no-audit "$@"`,
		hosts:   []string{"registry.npmjs.org"},
		base:    npmBase,
	},
}

// validVersion is what a recorded version may look like: the export puts it
// in a Dockerfile, and it comes from inside the sandbox, so nothing else is
// trusted.
var validVersion = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.+~:_!-]{0,127}$`)

func managerNamed(name string) (packageManager, bool) {
	for _, m := range managers {
		if m.name == name {
			return m, true
		}
	}
	return packageManager{}, false
}

// cutAny returns s up to the first of the characters in chars.
func cutAny(s, chars string) string {
	if i := strings.IndexAny(s, chars); i >= 0 {
		return s[:i]
	}
	return s
}

func npmBase(p string) string {
	if i := strings.LastIndex(p, "@"); i > 0 {
		return p[:i]
	}
	return p
}

var pipSeparators = regexp.MustCompile(`[-_.]+`)

// normalizePip compares Python names as PEP 503 does.
func normalizePip(s string) string {
	return strings.ToLower(pipSeparators.ReplaceAllString(s, "-"))
}

// maxVersionsOutput bounds what the agent's versions reader may print.
const maxVersionsOutput = 1 << 20

// parseVersions reads the agent's "name<TAB>version" lines (sandtray-agent
// versions: the manager's own database, read without running it).
func parseVersions(out string) map[string]string {
	v := map[string]string{}
	for line := range strings.Lines(out) {
		if n, ver, ok := strings.Cut(strings.TrimRight(line, "\n"), "\t"); ok && n != "" {
			v[n] = ver
		}
	}
	return v
}
