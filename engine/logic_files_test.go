package engine

import (
	"context"
	"slices"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestLogicFiles: write_file makes its folders and writes what read_file
// then reads (whole, or from an offset, truncated to a limit), and what
// commands see; list_files lists it, hidden entries only when asked; a
// missing file is not found, a folder is refused as one.
func TestLogicFiles(t *testing.T) {
	le := newLogicEngine(t)
	ctx := context.Background()
	id := le.create(t, sandbox.CreateRequest{}).ID
	if _, err := le.WriteFile(ctx, le.owner, id, sandbox.WriteRequest{Path: "src/main.txt", Data: []byte("hello world")}); err != nil {
		t.Fatal(err)
	}
	if _, err := le.WriteFile(ctx, le.owner, id, sandbox.WriteRequest{Path: ".hidden", Data: []byte("h")}); err != nil {
		t.Fatal(err)
	}
	got, err := le.ReadFile(ctx, le.owner, id, "src/main.txt", 0, 0)
	if err != nil || string(got.Data) != "hello world" || got.Size != 11 || got.Truncated || got.Path != le.cfg.Sandbox.Workdir+"/src/main.txt" {
		t.Errorf("read back: %+v, %v", got, err)
	}
	if got, err := le.ReadFile(ctx, le.owner, id, "src/main.txt", 6, 3); err != nil || string(got.Data) != "wor" || !got.Truncated {
		t.Errorf("read 3 bytes from 6: %+v, %v", got, err)
	}
	if out := le.run(t, id, sandbox.CommandRequest{Command: "cat src/main.txt"}); out.Stdout != "hello world" {
		t.Errorf("a command reads %q", out.Stdout)
	}
	_, err = le.ReadFile(ctx, le.owner, id, "nope.txt", 0, 0)
	wantKind(t, err, sandbox.ErrNotFound)
	_, err = le.ReadFile(ctx, le.owner, id, "src", 0, 0)
	wantKind(t, err, sandbox.ErrInvalid)

	list, err := le.ListFiles(ctx, le.owner, id, "", 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := entryPaths(list); !slices.Equal(got, []string{"src", "src/main.txt"}) {
		t.Errorf("listing %v, want src and src/main.txt", got)
	}
	if list.Entries[1].Type != "file" || list.Entries[1].Size != 11 || list.Entries[0].Type != "dir" {
		t.Errorf("entries %+v", list.Entries)
	}
	if list, err := le.ListFiles(ctx, le.owner, id, ".", 1, true); err != nil || !slices.Equal(entryPaths(list), []string{".hidden", "src"}) {
		t.Errorf("listing with hidden entries at depth 1: %v, %v", entryPaths(list), err)
	}
	_, err = le.ListFiles(ctx, le.owner, id, "missing", 1, false)
	wantKind(t, err, sandbox.ErrNotFound)
}

func entryPaths(l sandbox.Listing) []string {
	var out []string
	for _, e := range l.Entries {
		out = append(out, e.Path)
	}
	return out
}
