package registry

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"testing"
)

// lockUsers returns, for each Go file of the package in dir (tests too),
// the lines where it names the registry's lock (a selector ".regMu").
func lockUsers(t *testing.T, dir string) map[string][]int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	users := map[string][]int{}
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "regMu" {
				users[filepath.Base(f)] = append(users[filepath.Base(f)], fset.Position(sel.Pos()).Line)
			}
			return true
		})
	}
	return users
}

// TestOnlyTheRegistryTakesItsLock keeps the registry's lock inside
// registry.go. Outside this package the compiler keeps it (regMu is
// unexported: package engine and the parts go through Locked, WithRef,
// Resolve, BoxOf, …); inside it, every other file, tests included, goes
// through the same methods, so the lock's rules (regMu's comment) are kept
// in one file.
func TestOnlyTheRegistryTakesItsLock(t *testing.T) {
	users := lockUsers(t, ".")
	if len(users["registry.go"]) == 0 {
		t.Fatal("registry.go never names regMu: the lock was renamed, and this test checks nothing; follow the rename here")
	}
	for f, lines := range users {
		if f != "registry.go" {
			t.Errorf("%s takes the registry's lock itself (regMu at lines %v): use the registry's methods (registry.go: Locked, WithRef, …), or add one there", f, lines)
		}
	}
}

// TestLockUsersFindsAnotherFile shows the check fails where it should: a
// file beside registry.go that names the lock is found.
func TestLockUsersFindsAnotherFile(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"registry.go": "package registry\nfunc (r *Registry) Locked(fn func()) { r.regMu.Lock(); defer r.regMu.Unlock(); fn() }\n",
		"other.go":    "package registry\nfunc (r *Registry) x() {\n\tr.regMu.Lock()\n\tr.regMu.Unlock()\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	users := lockUsers(t, dir)
	if got := users["other.go"]; len(got) != 2 || got[0] != 3 {
		t.Errorf("other.go's uses of the lock = %v, want lines 3 and 4", got)
	}
	if len(users["registry.go"]) != 2 {
		t.Errorf("registry.go's uses = %v, want 2", users["registry.go"])
	}
}
