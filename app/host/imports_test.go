package host

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportDirection keeps DESIGN.md's layout: one package owns each outside
// SDK, the UI never sees Docker or MCP, and the engine never sees Fyne.
func TestImportDirection(t *testing.T) {
	rules := []struct {
		pkgs      string
		forbidden []string
		except    string // the one package allowed to import them
	}{
		{"./ui/...", []string{"github.com/moby/moby", "github.com/mark3labs/mcp-go", "github.com/sandtray/sandtray/engine/internal", "github.com/sandtray/sandtray/engine/mcpserver"}, ""},
		{"./engine/...", []string{"fyne.io/fyne"}, ""},
		{"./engine/... ./app/... ./ui/...", []string{"github.com/moby/moby/client", "github.com/moby/moby/api"}, "github.com/sandtray/sandtray/engine/internal/docker"},
		{"./engine/... ./app/... ./ui/...", []string{"github.com/mark3labs/mcp-go"}, "github.com/sandtray/sandtray/engine/mcpserver"},
		{"./app/shim", []string{"github.com/sandtray/sandtray/engine/mcpserver", "github.com/sandtray/sandtray/engine/sandbox", "github.com/adrg/xdg"}, ""},
	}
	for _, r := range rules {
		cmd := exec.Command("go", append([]string{"list", "-f", "{{.ImportPath}}: {{join .Imports \" \"}}"}, strings.Fields(r.pkgs)...)...)
		cmd.Dir = "../.." // the module root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v", r.pkgs, err)
		}
		for line := range strings.Lines(string(out)) {
			pkg, imports, _ := strings.Cut(strings.TrimSpace(line), ": ")
			if pkg == r.except || strings.HasPrefix(pkg, r.except+"/") && r.except != "" {
				continue
			}
			for _, imp := range strings.Fields(imports) {
				for _, bad := range r.forbidden {
					if strings.HasPrefix(imp, bad) {
						t.Errorf("%s imports %s (DESIGN.md: %s)", pkg, imp, r.pkgs)
					}
				}
			}
		}
	}
}
