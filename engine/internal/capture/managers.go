package capture

import (
	"encoding/json"
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
	query   string         // sh script printing what parse reads; names are "$@"
	env     []string
	// hosts are the package indexes the manager reaches: all an install
	// into a sandbox without the bridge network may reach, for that call.
	hosts []string
	base  func(pkg string) string                            // the name without pin or extras
	parse func(out string, names []string) map[string]string // name → version
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
		query:   `dpkg-query -W -f='${Package}\t${Version}\t${db:Status-Abbrev}\n' "$@" 2>/dev/null || true`,
		env:     []string{"DEBIAN_FRONTEND=noninteractive"},
		hosts:   []string{"deb.debian.org", "security.debian.org", "archive.ubuntu.com", "security.ubuntu.com", "ports.ubuntu.com"},
		base:    func(p string) string { return cutAny(cutAny(p, "="), ":") },
		parse:   parseDpkg,
	},
	{
		name: sandbox.ManagerApk, command: "apk",
		valid:   regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9+._-]*(=[A-Za-z0-9._+-]+)?$`),
		install: `apk add --no-cache --no-progress "$@"`,
		hosts:   []string{"dl-cdn.alpinelinux.org"},
		query:   `apk info -v 2>/dev/null`,
		base:    func(p string) string { return cutAny(p, "=") },
		parse:   parseApk,
	},
	{
		name: sandbox.ManagerPip, command: "pip3 pip",
		valid: regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?(\[[A-Za-z0-9._,-]+\])?((==|>=|<=|~=|!=|<|>)[A-Za-z0-9.*+!_-]+)?$`),
		// PIP_BREAK_SYSTEM_PACKAGES only matters where the image has Debian's
		// EXTERNALLY-MANAGED marker: a sandbox is the user's to change.
		install: pipCommand + `"$pip" install "$@"`,
		query:   pipCommand + `"$pip" show "$@" 2>/dev/null || true`,
		env: []string{"PIP_BREAK_SYSTEM_PACKAGES=1", "PIP_NO_INPUT=1", "PIP_DISABLE_PIP_VERSION_CHECK=1",
			"PIP_ROOT_USER_ACTION=ignore"},
		hosts: []string{"pypi.org", "files.pythonhosted.org"},
		base:  func(p string) string { return cutAny(p, "[=<>~!") },
		parse: parsePipShow,
	},
	{
		name: sandbox.ManagerNpm, command: "npm",
		valid:   regexp.MustCompile(`^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*(@[A-Za-z0-9.^~<>=*+_-]+)?$`),
		install: `npm install -g --no-fund --no-audit "$@"`,
		hosts:   []string{"registry.npmjs.org"},
		query:   `npm ls -g --depth=0 --json 2>/dev/null || true`,
		base:    npmBase,
		parse:   parseNpmLs,
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

func parseDpkg(out string, _ []string) map[string]string {
	v := map[string]string{}
	for line := range strings.Lines(out) {
		f := strings.Split(strings.TrimSpace(line), "\t")
		if len(f) == 3 && strings.HasPrefix(f[2], "ii") {
			v[f[0]] = f[1]
		}
	}
	return v
}

// parseApk reads `apk info -v` lines such as "jq-1.7.1-r0".
func parseApk(out string, names []string) map[string]string {
	v := map[string]string{}
	for line := range strings.Lines(out) {
		line = strings.TrimSpace(line)
		for _, n := range names {
			if rest, ok := strings.CutPrefix(line, n+"-"); ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
				v[n] = rest
			}
		}
	}
	return v
}

// parsePipShow reads `pip show` blocks; the names are matched normalised.
func parsePipShow(out string, names []string) map[string]string {
	v := map[string]string{}
	name := ""
	for line := range strings.Lines(out) {
		line = strings.TrimSpace(line)
		if n, ok := strings.CutPrefix(line, "Name: "); ok {
			name = n
		} else if ver, ok := strings.CutPrefix(line, "Version: "); ok && name != "" {
			for _, want := range names {
				if normalizePip(want) == normalizePip(name) {
					v[want] = ver
				}
			}
		}
	}
	return v
}

func parseNpmLs(out string, _ []string) map[string]string {
	var doc struct {
		Dependencies map[string]struct {
			Version string `json:"version"`
		} `json:"dependencies"`
	}
	v := map[string]string{}
	if json.Unmarshal([]byte(out), &doc) != nil {
		return v
	}
	for name, d := range doc.Dependencies {
		v[name] = d.Version
	}
	return v
}
