package snapshot

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestPlanPutsBackWhatChanged: a restore's plan is every path either
// change list names, once, a folder only when it was added or deleted
// whole (not as the parent of changes inside it), nothing under a path
// taken whole, and never the engine's own files (its link's socket among
// them, on a read-only mount) or what the runtime manages.
func TestPlanPutsBackWhatChanged(t *testing.T) {
	c := func(kind, p string) runtime.Change { return runtime.Change{Kind: kind, Path: p} }
	snap := []runtime.Change{
		c(runtime.ChangeChanged, "/home"), c(runtime.ChangeChanged, "/home/u"), c(runtime.ChangeAdded, "/home/u/a.txt"),
		c(runtime.ChangeAdded, "/opt/tool"), c(runtime.ChangeAdded, "/opt/tool/bin/x"),
		c(runtime.ChangeChanged, "/etc/hosts"), c(runtime.ChangeAdded, run.PidDir+"/1"), c(runtime.ChangeAdded, runtime.LinkDir+"/s"),
	}
	now := []runtime.Change{
		c(runtime.ChangeChanged, "/home/u"), c(runtime.ChangeDeleted, "/home/u/a.txt"), c(runtime.ChangeAdded, "/home/u/b.txt"),
		c(runtime.ChangeDeleted, "/usr/lib/z.so"), c(runtime.ChangeChanged, "/proc"),
	}
	got := plan(snap, now)
	want := []string{"/home/u/a.txt", "/home/u/b.txt", "/opt/tool", "/usr/lib/z.so"}
	if !slices.Equal(got, want) {
		t.Errorf("plan = %q, want %q", got, want)
	}
	if got := plan(); len(got) != 0 {
		t.Errorf("plan of no changes = %q, want none", got)
	}
}

// TestStripTopExtractsIntoTheFolder: a folder's tar, as CopyFrom sends it
// (its top entry the folder), comes out with the top entry gone and every
// name relative to the folder, so it extracts into the folder itself.
func TestStripTopExtractsIntoTheFolder(t *testing.T) {
	var in bytes.Buffer
	tw := tar.NewWriter(&in)
	for _, h := range []*tar.Header{
		{Name: "work/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "work/a.txt", Typeflag: tar.TypeReg, Mode: 0o644, Size: 3},
		{Name: "work/sub/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "./work/sub/b.txt", Typeflag: tar.TypeReg, Mode: 0o644, Size: 3},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write([]byte("abc"))
		}
	}
	tw.Close()
	tr := tar.NewReader(stripTop(&in))
	var names []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		if h.Typeflag == tar.TypeReg && string(body) != "abc" {
			t.Errorf("%s holds %q, want abc", h.Name, body)
		}
		names = append(names, h.Name)
	}
	if want := []string{"a.txt", "sub/", "sub/b.txt"}; !slices.Equal(names, want) {
		t.Errorf("names = %q, want %q", names, want)
	}
	if _, err := io.ReadAll(stripTop(strings.NewReader("not a tar, but long enough to be read as a header block........"))); err == nil {
		t.Error("stripTop passed a broken archive on without an error")
	}
}

// TestCheckLabel: a label is trimmed; one with control characters or
// longer than MaxLabel is refused as invalid, saying what a label may be.
func TestCheckLabel(t *testing.T) {
	if got, err := CheckLabel("  before the upgrade "); err != nil || got != "before the upgrade" {
		t.Errorf("CheckLabel = %q, %v", got, err)
	}
	if _, err := CheckLabel(strings.Repeat("é", MaxLabel)); err != nil {
		t.Errorf("a label of MaxLabel characters: %v", err)
	}
	for _, bad := range []string{"a\nb", "bell\a", strings.Repeat("x", MaxLabel+1)} {
		_, err := CheckLabel(bad)
		if !errors.Is(err, sandbox.ErrInvalid) || !strings.Contains(err.Error(), "no control characters") {
			t.Errorf("CheckLabel(%q) = %v, want an ErrInvalid that says what a label may be", bad, err)
		}
	}
}

// TestHoldChargesAgainstTheBudget: what the snapshots under way write is
// charged against limits.max_snapshot_mb together; a charge past it is
// refused saying what is left; a place given back without keeping frees
// its bytes, and one kept counts them as a snapshot's.
func TestHoldChargesAgainstTheBudget(t *testing.T) {
	s := New(context.Background(), nil, func() Config { return Config{BudgetMB: 10} }, slog.New(slog.DiscardHandler))
	a, _ := s.Reserve(context.Background(), Box{ID: "a"}, false) // a fork's place: no runtime asked
	b, _ := s.Reserve(context.Background(), Box{ID: "b"}, false)
	if err := a.charge(6 << 20); err != nil {
		t.Fatal(err)
	}
	var over errBudget
	if err := b.charge(5 << 20); !errors.As(err, &over) || !strings.Contains(err.Error(), "4 MB left of limits.max_snapshot_mb (10 MB") {
		t.Fatalf("a charge past the budget = %v, want one saying 4 MB are left of 10", err)
	}
	if err := b.charge(4 << 20); err != nil {
		t.Fatalf("a charge that fits: %v", err)
	}
	a.Release(false)
	if err := b.charge(6 << 20); err != nil {
		t.Fatalf("a's bytes, given back, still count: %v", err)
	}
	b.Release(true)
	c, _ := s.Reserve(context.Background(), Box{ID: "c"}, false)
	if err := c.charge(1); !errors.As(err, &over) {
		t.Fatalf("after b's 10 MB were kept, a charge = %v, want refused", err)
	}
}
