package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestPageEntriesStaysWithinTheBudget(t *testing.T) {
	big := strings.Repeat("<", 300<<10) // 300 KiB of text, 1.8 MiB as JSON
	entries := []activityEntry{{Tool: "a", Stdout: "x"}, {Tool: "b", Stdout: big}, {Tool: "c", Stdout: "y"}, {Tool: "d", Stderr: big + big}}
	tests := []struct {
		skip, tail int
		tools      string // the page's tools, oldest first
		nextSkip   int
	}{
		{0, 0, "d", 1}, // d alone is too big: cut to fit
		{1, 0, "c", 2}, // b does not fit next to c: the page ends at c
		{2, 0, "b", 3}, // b alone: cut to fit
		{3, 0, "a", 0},
		{1, 1, "c", 2}, // tail 1: only c, and b is still before it
	}
	for _, tt := range tests {
		page, next := pageEntries(entries, tt.skip, tt.tail)
		var tools strings.Builder
		for _, e := range page {
			tools.WriteString(e.Tool)
		}
		size := 0
		for _, e := range page {
			b, _ := json.Marshal(e)
			size += len(b)
		}
		if size > replyBudget {
			t.Errorf("skip %d tail %d: page of %d bytes as JSON, over the budget %d", tt.skip, tt.tail, size, replyBudget)
		}
		if tools.String() != tt.tools || next != tt.nextSkip {
			t.Errorf("skip %d tail %d: page %q next_skip %d, want %q %d", tt.skip, tt.tail, tools.String(), next, tt.tools, tt.nextSkip)
		}
	}
	if page, _ := pageEntries(entries, 0, 0); !page[0].Cut || !strings.HasSuffix(page[0].Stderr, "<") {
		t.Errorf("an entry cut to fit: cut %v, want the end of its output kept", page[0].Cut)
	}
}

func TestPageListingStaysWithinTheBudget(t *testing.T) {
	var entries []sandbox.FileEntry
	for range 2000 {
		entries = append(entries, sandbox.FileEntry{Path: strings.Repeat("n", 1000), Type: "file"})
	}
	seen, offset, pages := 0, 0, 0
	for {
		page, next := pageListing(entries, offset)
		if b, _ := json.Marshal(page); len(b) > replyBudget {
			t.Fatalf("page at offset %d: %d bytes, over the budget", offset, len(b))
		}
		seen += len(page)
		pages++
		if next == 0 {
			break
		}
		offset = next
	}
	if seen != len(entries) || pages < 2 {
		t.Errorf("paged %d entries in %d pages, want all %d in several", seen, pages, len(entries))
	}
}
