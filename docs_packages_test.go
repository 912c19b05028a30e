package sandtray

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/sandtray/sandtray"

// goPackages lists the module's packages as paths from its root ("." for
// the root itself), as `go list ./...` finds them.
func goPackages(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	var pkgs []string
	for line := range strings.Lines(string(out)) {
		p := strings.TrimSpace(line)
		switch {
		case p == module:
			pkgs = append(pkgs, ".")
		case strings.HasPrefix(p, module+"/"):
			pkgs = append(pkgs, strings.TrimPrefix(p, module+"/"))
		}
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list ./... found only %v", pkgs)
	}
	return pkgs
}

// section returns the text of a markdown file from the heading title to
// the next heading of the same level.
func section(t *testing.T, file, title string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "\n"+title+"\n")
	if start < 0 {
		t.Fatalf("%s has no heading %q", file, title)
	}
	level := title[:strings.IndexByte(title, ' ')+1]
	rest := text[start+len(title)+2:]
	if end := strings.Index(rest, "\n"+level); end >= 0 {
		rest = rest[:end]
	}
	return rest
}

var (
	// tableRow is a row of the package map: its first column names a package.
	tableRow = regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")
	// quoted is anything in backticks.
	quoted = regexp.MustCompile("`([^`]+)`")
	// repoPath is a path from the repository's root, as the docs write them.
	repoPath = regexp.MustCompile(`^(?:agent|app|assets|engine|internal|packaging|serve|test|ui)(?:/[A-Za-z0-9_.-]+)*/?$`)
)

// TestPackageMapIsComplete keeps docs/architecture.md's package map true to
// the code: every package of the module is named in it, every row of its
// table is a package, and every path it names exists, so a package added,
// moved or removed without the map fails here.
func TestPackageMapIsComplete(t *testing.T) {
	const doc = "docs/architecture.md"
	text := section(t, doc, "## The package map")
	pkgs := goPackages(t)
	named := map[string]bool{}
	for _, m := range quoted.FindAllStringSubmatch(text, -1) {
		named[m[1]] = true
		if repoPath.MatchString(m[1]) {
			if _, err := os.Stat(m[1]); err != nil {
				t.Errorf("%s's package map names %s, which does not exist: name where it is now, or remove it", doc, m[1])
			}
		}
	}
	rows := tableRow.FindAllStringSubmatch(text, -1)
	if len(rows) < 10 {
		t.Fatalf("%s's package map has %d rows: the table's format changed", doc, len(rows))
	}
	for _, r := range rows {
		if !slices.Contains(pkgs, r[1]) {
			t.Errorf("%s's package map has a row for %s, which go list ./... does not find: remove the row or name the package as it is now", doc, r[1])
		}
	}
	for _, p := range pkgs {
		if !named[p] {
			t.Errorf("package %s is not in %s's package map: add a row (or, for test support, a mention) saying what it is", p, doc)
		}
	}
}

// TestEngineDocNamesItsPackages keeps engine/doc.go's list of the packages
// the engine composes true: one bullet per package under engine/internal
// (test support aside), and none for a package that is not there.
func TestEngineDocNamesItsPackages(t *testing.T) {
	data, err := os.ReadFile("engine/doc.go")
	if err != nil {
		t.Fatal(err)
	}
	bullet := regexp.MustCompile(`(?m)^//   - ([a-z0-9]+):`)
	var listed []string
	for _, m := range bullet.FindAllStringSubmatch(string(data), -1) {
		listed = append(listed, m[1])
	}
	var want []string
	for _, p := range goPackages(t) {
		name, ok := strings.CutPrefix(p, "engine/internal/")
		if !ok || strings.Contains(name, "/") || strings.HasSuffix(name, "test") {
			continue
		}
		want = append(want, name)
	}
	for _, w := range want {
		if !slices.Contains(listed, w) {
			t.Errorf("engine/doc.go does not list engine/internal/%s: add a bullet saying what it does", w)
		}
	}
	for _, l := range listed {
		if !slices.Contains(want, l) {
			t.Errorf("engine/doc.go lists %s, which is not a package under engine/internal: remove or rename the bullet", l)
		}
	}
}
