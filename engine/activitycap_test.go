package engine

import (
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/internal/statedir"
	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestTrimActivity(t *testing.T) {
	big := sandbox.Activity{Stdout: strings.Repeat("a", 5<<20)}
	acts := []sandbox.Activity{{Input: "first"}, big, big, big, big, {Input: "last"}}
	got := trimActivity(acts)
	size := 0
	for _, a := range got {
		size += activitySize(a)
	}
	if size > activityBytesKept || got[len(got)-1].Input != "last" || len(got) != 4 {
		t.Errorf("kept %d entries, %d bytes, last %q; want the newest 4 within %d bytes", len(got), size, got[len(got)-1].Input, activityBytesKept)
	}
	huge := sandbox.Activity{Stdout: strings.Repeat("b", activityBytesKept+1)}
	if got := trimActivity([]sandbox.Activity{big, huge}); len(got) != 1 || got[0].Stdout != huge.Stdout {
		t.Errorf("the newest entry alone over the cap: kept %d entries, want just it", len(got))
	}
	many := make([]sandbox.Activity, activityKept+10)
	if got := trimActivity(many); len(got) != activityKept {
		t.Errorf("kept %d small entries, want %d", len(got), activityKept)
	}
}

func TestActivityFileRotates(t *testing.T) {
	s, err := statedir.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	entry := sandbox.Activity{Tool: "execute_command", Stdout: strings.Repeat("x", 1<<20)}
	for range 40 {
		if err := s.AppendActivity("abc", entry); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AppendActivity("abc", sandbox.Activity{Tool: "last"}); err != nil {
		t.Fatal(err)
	}
	// What adopt keeps of a sandbox's log: the last entries, trimmed.
	loadActivity := func(id string, max int) ([]sandbox.Activity, error) {
		acts, err := s.LoadActivity(id, max)
		return trimActivity(acts), err
	}
	got, err := loadActivity("abc", activityKept)
	if err != nil || len(got) == 0 || got[len(got)-1].Tool != "last" {
		t.Fatalf("loadActivity after rotation: %d entries, %v", len(got), err)
	}
	s.Remove("abc")
	if got, _ := loadActivity("abc", activityKept); len(got) != 0 {
		t.Errorf("remove left %d entries", len(got))
	}
}
