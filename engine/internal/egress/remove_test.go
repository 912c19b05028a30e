package egress

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestRemoveRule: a rule the user gave one sandbox can be taken back; the
// host is asked about again, and the saved rules no longer hold it.
func TestRemoveRule(t *testing.T) {
	tg := askGate(t, 0)
	var mu sync.Mutex
	var saved SandboxRules
	tg.Register(Sandbox{ID: "box1", Name: "sb", Save: func(r SandboxRules) { mu.Lock(); saved = r; mu.Unlock() }})
	for _, a := range []struct {
		host string
		a    Answer
	}{{"new.test", AllowSandbox}, {"other.test", AllowSandbox}, {"bad.test:8080", DenySandbox}} {
		host, port, _ := Target(a.host, 0)
		if _, err := tg.AnswerHost("box1", host, port, a.a); err != nil {
			t.Fatal(err)
		}
	}
	if res, _ := tg.Request(t.Context(), "box1", []string{"new.test"}, ""); !slices.Equal(res.Allowed, []string{"new.test"}) {
		t.Fatalf("before removal: %+v", res)
	}
	for _, p := range []string{"NEW.test", "bad.test:8080"} {
		if ok, err := tg.RemoveRule("box1", p); !ok || err != nil {
			t.Fatalf("RemoveRule(%s) = %t, %v", p, ok, err)
		}
	}
	mu.Lock()
	got := saved
	mu.Unlock()
	if !slices.Equal(got.Allow, []string{"other.test"}) || len(got.Deny) != 0 {
		t.Fatalf("saved %+v", got)
	}
	if n, _ := tg.Network("box1"); !slices.Equal(n.Rules.Allow, []string{"other.test"}) || len(n.Rules.Deny) != 0 {
		t.Fatalf("network rules %+v", n.Rules)
	}
	if res, _ := tg.Request(t.Context(), "box1", []string{"new.test"}, ""); !slices.Equal(res.Pending, []string{"new.test"}) {
		t.Fatalf("after removal the host is not asked about again: %+v", res)
	}
	if ok, err := tg.RemoveRule("box1", "new.test"); ok || err != nil {
		t.Fatalf("removing it twice = %t, %v", ok, err)
	}
	if _, err := tg.RemoveRule("box1", "not a host"); !errors.Is(err, sandbox.ErrInvalid) {
		t.Fatalf("bad pattern: %v", err)
	}
	if _, err := tg.RemoveRule("nobox", "new.test"); !errors.Is(err, sandbox.ErrNotFound) {
		t.Fatalf("unknown sandbox: %v", err)
	}
}

// TestRemoveGlobal: an approval for every sandbox can be taken back, and
// stays gone for the next gate.
func TestRemoveGlobal(t *testing.T) {
	dir := t.TempDir()
	o := Options{Allow: []string{}, Ask: true, GlobalFile: dir + "/approved.json"}
	names := map[string][]string{"g.test": {"93.184.216.34"}, "keep.test": {"93.184.216.35"}}
	tg := newTestGate(t, o, names)
	for _, h := range []string{"g.test", "keep.test"} {
		if _, err := tg.AnswerHost("box1", h, 0, AllowGlobal); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := tg.RemoveGlobal("g.test"); !ok || err != nil {
		t.Fatalf("RemoveGlobal = %t, %v", ok, err)
	}
	if res, _ := tg.Request(t.Context(), "box1", []string{"g.test", "keep.test"}, ""); !slices.Equal(res.Pending, []string{"g.test"}) || !slices.Equal(res.Allowed, []string{"keep.test"}) {
		t.Fatalf("after removal: %+v", res)
	}
	if ok, _ := tg.RemoveGlobal("g.test"); ok {
		t.Fatal("removed twice")
	}
	next := newTestGate(t, o, names)
	if n, _ := next.Network("box1"); !slices.Equal(n.GlobalAllow, []string{"keep.test"}) {
		t.Fatalf("the next gate's approvals: %+v", n.GlobalAllow)
	}
}
