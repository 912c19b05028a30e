package capture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// dockerfileMarker starts every Dockerfile Sandtray writes; an export folder
// whose Dockerfile starts with it may be written again.
const dockerfileMarker = "# Dockerfile written by Sandtray"

// archiveName is the build context's archive of the sandbox's files. A tar
// that ADD unpacks, rather than a folder for COPY, because COPY resets the
// owner and mode of every folder it passes through (a 0700 /root becomes
// 0755, measured on Docker 20.10) while ADD of a tar keeps existing folders
// and applies each entry's owner, mode, setuid bits and symlinks exactly. It
// also means nothing from the sandbox lands on the host as a symlink.
const archiveName = "rootfs.tar"

// dockerignore keeps anything else in the folder out of the build.
const dockerignore = "# Written by Sandtray: only the Dockerfile and " + archiveName + " are needed.\n*\n!Dockerfile\n!" + archiveName + "\n"

// listedRoots caps the archived paths the Dockerfile's comment lists.
const listedRoots = 100

// installOrder puts system packages first: pip or npm may need them.
var installOrder = []string{sandbox.ManagerApt, sandbox.ManagerApk, sandbox.ManagerPip, sandbox.ManagerNpm}

// dockerfile renders the plan; archive says whether rootfs.tar has entries.
// Everything from the sandbox is quoted: paths go in JSON arrays or
// strconv.Quote'd comments, versions were checked by validVersion.
func (p *exportPlan) dockerfile(archive bool) string {
	var w strings.Builder
	fmt.Fprintf(&w, "%s from sandbox %s (%s) at %s.\n", dockerfileMarker, p.name, sandbox.ShortID(p.id), time.Now().UTC().Format(time.RFC3339))
	w.WriteString("# Build it in this folder: docker build -t my-env .\n")
	if p.note != "" {
		fmt.Fprintf(&w, "# Note: %s\n", strconv.Quote(p.note))
	}
	fmt.Fprintf(&w, "FROM %s\n", p.from)
	for _, k := range slices.Sorted(maps.Keys(p.env)) {
		if strings.ContainsAny(p.env[k], "\n\r") {
			fmt.Fprintf(&w, "# ENV %s left out: its value has a line break\n", k)
			continue
		}
		fmt.Fprintf(&w, "ENV %s=%s\n", k, envQuote(p.env[k]))
	}
	asRoot := p.user != "" && p.user != "root" && p.user != "0" && (len(p.packages) > 0 || archive || len(p.deleted) > 0)
	if asRoot {
		w.WriteString("USER root\n")
	}
	for _, m := range installOrder {
		if line := installLine(m, p.packages); line != "" {
			w.WriteString(line)
		}
	}
	if archive {
		p.writeArchiveComment(&w)
		fmt.Fprintf(&w, "ADD %s /\n", archiveName)
	}
	for chunk := range slices.Chunk(p.deleted, 50) {
		fmt.Fprintf(&w, "RUN %s\n", jsonArray(append([]string{"rm", "-rf", "--"}, chunk...)))
	}
	if p.workdir != "" {
		fmt.Fprintf(&w, "WORKDIR %s\n", p.workdir)
	}
	if asRoot {
		fmt.Fprintf(&w, "USER %s\n", p.user)
	}
	return w.String()
}

func (p *exportPlan) writeArchiveComment(w *strings.Builder) {
	w.WriteString("# Files added or changed in the sandbox (folders with their contents):\n")
	for i, r := range p.roots {
		if i == listedRoots {
			fmt.Fprintf(w, "#   … and %d more\n", len(p.roots)-listedRoots)
			break
		}
		fmt.Fprintf(w, "#   %s\n", strconv.Quote(r))
	}
}

// installLine is the RUN line installing the manifest's packages of one
// manager, pinned to the recorded versions, or "".
func installLine(manager string, pkgs []sandbox.Package) string {
	var args []string
	for _, p := range pkgs {
		if p.Manager != manager {
			continue
		}
		switch manager {
		case sandbox.ManagerApt, sandbox.ManagerApk:
			args = append(args, shellQuote(p.Name+"="+p.Version))
		case sandbox.ManagerPip:
			args = append(args, shellQuote(p.Name+"=="+p.Version))
		case sandbox.ManagerNpm:
			args = append(args, shellQuote(p.Name+"@"+p.Version))
		}
	}
	if len(args) == 0 {
		return ""
	}
	list := strings.Join(args, " ")
	switch manager {
	case sandbox.ManagerApt:
		return "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends " + list + " && rm -rf /var/lib/apt/lists/*\n"
	case sandbox.ManagerApk:
		return "RUN apk add --no-cache " + list + "\n"
	case sandbox.ManagerPip:
		return "RUN " + pipCommand + "PIP_BREAK_SYSTEM_PACKAGES=1 \"$pip\" install --no-cache-dir " + list + "\n"
	default:
		return "RUN npm install -g " + list + "\n"
	}
}

// shellQuote single-quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// envQuote double-quotes an ENV value; ENV expands $ and takes \ as escape.
func envQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`)
	return `"` + r.Replace(s) + `"`
}

// jsonArray renders an exec-form argument list: no shell, exact bytes.
func jsonArray(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(a)
		quoted[i] = strings.TrimSpace(b.String())
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}
