package engine

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The engine's centre: package engine's own code (tests aside) and the
// methods declared on *Engine. Its parts live in engine/internal and reach
// the centre through small interfaces (docs/architecture.md, "The engine's
// parts"); a part that grows back in here fails this test.
const (
	maxCentreLines   = 3000
	maxEngineMethods = 80
)

// centreSize counts the lines of the non-test Go files in dir and the
// methods declared there on Engine or *Engine.
func centreSize(t *testing.T, dir string) (lines, methods int) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(src, []byte("\n"))
		file, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 {
				continue
			}
			typ := fn.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if id, ok := typ.(*ast.Ident); ok && id.Name == "Engine" {
				methods++
			}
		}
	}
	return lines, methods
}

func TestTheCentreStaysSmall(t *testing.T) {
	lines, methods := centreSize(t, ".")
	if lines > maxCentreLines {
		t.Errorf("package engine is %d lines (tests aside), over %d: give the new work to a part in engine/internal (docs/architecture.md)", lines, maxCentreLines)
	}
	if methods > maxEngineMethods {
		t.Errorf("*Engine has %d methods, over %d: give the new ones to a part in engine/internal", methods, maxEngineMethods)
	}
	t.Logf("package engine: %d lines, %d methods on *Engine", lines, methods)
}

// TestCentreSizeCounts shows the count is right on a package it knows.
func TestCentreSizeCounts(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"a.go":      "package engine\n\ntype Engine struct{}\n\nfunc (e *Engine) A() {}\nfunc (Engine) B() {}\n",
		"b.go":      "package engine\n\ntype other struct{}\n\nfunc (o *other) C() {}\nfunc D() {}\n",
		"a_test.go": "package engine\n\nfunc (e *Engine) T() {}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if lines, methods := centreSize(t, dir); lines != 12 || methods != 2 {
		t.Errorf("centreSize = %d lines, %d methods; want 12 and 2", lines, methods)
	}
}
