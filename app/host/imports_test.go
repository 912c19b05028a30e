package host

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/sandtray/sandtray"

// listed is one package as `go list` describes it.
type listed struct {
	path    string
	main    bool     // a program: a composition root, like app/cmd
	imports []string // direct
	deps    []string // everything it reaches (go list -deps)
}

// list runs `go list` on patterns from the module root.
func list(t *testing.T, patterns ...string) []listed {
	t.Helper()
	args := append([]string{"list", "-f", "{{.ImportPath}}|{{eq .Name \"main\"}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.." // the module root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v", strings.Join(patterns, " "), err)
	}
	var pkgs []listed
	for line := range strings.Lines(string(out)) {
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) != 4 {
			t.Fatalf("go list printed %q", line)
		}
		pkgs = append(pkgs, listed{path: f[0], main: f[1] == "true", imports: strings.Fields(f[2]), deps: strings.Fields(f[3])})
	}
	return pkgs
}

// isStd reports whether an import path is the standard library's (no dot
// in its first element).
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func under(path, prefix string) bool { return path == prefix || strings.HasPrefix(path, prefix+"/") }

// TestImportDirection keeps the import rules of docs/architecture.md on what
// each package reaches, not only what it imports: one package owns each
// outside SDK, the UI never sees the engine's insides, Docker or MCP, the
// engine never sees Fyne, and the engine's internal packages never see the
// engine.
func TestImportDirection(t *testing.T) {
	reach := []struct {
		pkgs      string
		forbidden []string
		mains     bool // the rule holds for programs too
	}{
		// ui's demo program (ui/internal/demo) wires app/settings, which
		// validates with the engine's config: a program, like app/cmd.
		{"./ui/...", []string{"github.com/moby/moby", "github.com/mark3labs/mcp-go", module + "/engine/internal", module + "/serve/mcpserver"}, false},
		{"./engine/... ./serve/...", []string{"fyne.io/fyne"}, true},
		{"./engine/internal/...", []string{module + "/engine", module + "/serve/mcpserver", module + "/app"}, true},
		{"./engine/sandbox", []string{module + "/engine/internal", "github.com/"}, true},
		// The config, image names and the settings editor need no runtime:
		// they never reach the Docker SDK (nor, through it, a daemon).
		{"./engine/config ./engine/imageref ./app/settings", []string{"github.com/moby/moby", "github.com/docker/", module + "/engine/runtime/docker"}, true},
		// The shim itself imports only serve/socket and the stdlib (socket
		// finds its folder with xdg: the shim may reach that, not use it).
		{"./app/shim", []string{module + "/serve/mcpserver", module + "/engine/sandbox", module + "/engine/internal"}, true},
	}
	for _, r := range reach {
		for _, p := range list(t, strings.Fields(r.pkgs)...) {
			if p.main && !r.mains {
				continue
			}
			for _, d := range p.deps {
				for _, bad := range r.forbidden {
					// module+"/engine" forbids the engine package itself, not its children.
					if d == bad || (bad != module+"/engine" && under(d, bad)) {
						t.Errorf("%s reaches %s (docs/architecture.md, import rules: %s must not)", p.path, d, r.pkgs)
					}
				}
			}
		}
	}
	// The config needs only the standard library, TOML and image names
	// (distribution/reference): the settings editor links nothing else
	// through it. What it reaches of Sandtray's must hold to the same.
	configMay := []string{"github.com/BurntSushi/toml", "github.com/distribution/reference", "github.com/opencontainers/go-digest",
		module + "/engine/config", module + "/engine/sandbox", module + "/engine/imageref",
		module + "/engine/internal/egress/hostrule", module + "/internal/homedir"}
	for _, p := range list(t, "./engine/config") {
		for _, d := range p.deps {
			if !isStd(d) && !strings.HasPrefix(d, "vendor/") && !slices.ContainsFunc(configMay, func(ok string) bool { return under(d, ok) }) {
				t.Errorf("%s reaches %s: the config needs only the standard library, TOML and image names", p.path, d)
			}
		}
	}
	for _, p := range list(t, "./app/shim") {
		for _, imp := range p.imports {
			if !isStd(imp) && imp != module+"/serve/socket" {
				t.Errorf("%s imports %s: the shim imports only serve/socket and the standard library", p.path, imp)
			}
		}
	}
	owners := []struct {
		sdk, owner string
	}{
		{"github.com/moby/moby/client", module + "/engine/runtime/docker"},
		{"github.com/moby/moby/api", module + "/engine/runtime/docker"},
		{"github.com/mark3labs/mcp-go", module + "/serve/mcpserver"},
		{"k8s.io/client-go", module + "/engine/runtime/kubernetes"},
		{"k8s.io/api", module + "/engine/runtime/kubernetes"},
		{"k8s.io/apimachinery", module + "/engine/runtime/kubernetes"},
	}
	all := list(t, "./...")
	// Only the Docker runtime reaches the Docker SDK: the engine and
	// everything else use engine/runtime. Programs link the runtime in (for
	// its side effect), and test/dockertest drives Docker on purpose, for
	// tests.
	sdkUsers := []string{module + "/engine/runtime/docker", module + "/test/dockertest"}
	for _, p := range all {
		if p.main || slices.Contains(sdkUsers, p.path) {
			continue
		}
		for _, d := range p.deps {
			if under(d, "github.com/moby/moby") || under(d, "github.com/docker") || d == module+"/engine/runtime/docker" {
				t.Errorf("%s reaches %s: only engine/runtime/docker (and programs, which link it) may reach the Docker SDK", p.path, d)
				break
			}
		}
	}
	for _, o := range owners {
		for _, p := range all {
			if under(p.path, o.owner) {
				continue
			}
			if i := slices.IndexFunc(p.imports, func(imp string) bool { return under(imp, o.sdk) }); i >= 0 {
				t.Errorf("%s imports %s: only %s may", p.path, p.imports[i], o.owner)
			}
		}
	}
}
