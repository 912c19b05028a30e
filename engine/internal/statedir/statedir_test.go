package statedir

import (
	"os"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestStateRoundTrip: a saved state reads back, private to the user; a
// sandbox with none reports so; Remove forgets everything.
func TestStateRoundTrip(t *testing.T) {
	s, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	type state struct{ Name string }
	var got state
	if ok, err := s.Load("a", &got); ok || err != nil {
		t.Fatalf("Load of a sandbox never saved = %v, %v; want false, nil", ok, err)
	}
	if err := s.Save("a", state{"first"}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Load("a", &got); !ok || err != nil || got.Name != "first" {
		t.Fatalf("Load = %v, %v, %+v; want the saved state", ok, err, got)
	}
	if st, err := os.Stat(s.statePath("a")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("state file mode %v, %v; want 0600", st.Mode(), err)
	}
	if err := s.AppendActivity("a", sandbox.Activity{Tool: "execute_code"}); err != nil {
		t.Fatal(err)
	}
	s.Remove("a")
	if ok, _ := s.Load("a", &got); ok {
		t.Error("state still there after Remove")
	}
	if acts, err := s.LoadActivity("a", 10); len(acts) != 0 || err != nil {
		t.Errorf("activity after Remove = %v, %v; want none", acts, err)
	}
}

// TestActivityKeepsTheNewestAndSkipsATornLine: the log returns the last
// max entries, oldest first, and a line a crash cut short is skipped.
func TestActivityKeepsTheNewestAndSkipsATornLine(t *testing.T) {
	s, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"one", "two", "three"} {
		if err := s.AppendActivity("b", sandbox.Activity{Tool: tool}); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(s.activityPath("b"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"tool":"tor`)
	f.Close()
	acts, err := s.LoadActivity("b", 2)
	var tools []string
	for _, a := range acts {
		tools = append(tools, a.Tool)
	}
	if err != nil || strings.Join(tools, ",") != "two,three" {
		t.Errorf("LoadActivity(2) = %v, %v; want two,three", tools, err)
	}
}

// TestActivityRotates: past activityFileMax the log moves to .1 (one older
// file kept) and reading goes on across both.
func TestActivityRotates(t *testing.T) {
	s, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 1<<20)
	for range 20 { // 20 MiB: one rotation
		if err := s.AppendActivity("c", sandbox.Activity{Tool: "execute_command", Stdout: big}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AppendActivity("c", sandbox.Activity{Tool: "last"}); err != nil {
		t.Fatal(err)
	}
	old, err1 := os.Stat(s.activityPath("c") + ".1")
	cur, err2 := os.Stat(s.activityPath("c"))
	if err1 != nil || err2 != nil || old.Size() > activityFileMax || cur.Size() > activityFileMax {
		t.Fatalf("after 20 MiB: .1 %v %v, current %v %v; want both at most %d bytes", old, err1, cur, err2, activityFileMax)
	}
	acts, err := s.LoadActivity("c", 25)
	if err != nil || len(acts) != 21 || acts[len(acts)-1].Tool != "last" {
		t.Errorf("LoadActivity across the rotation: %d entries, %v; want all 21, the newest last", len(acts), err)
	}
}
