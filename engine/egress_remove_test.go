package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestRemoveEgressRule: the app's Network tab takes a sandbox's rule back,
// while it runs (the gate and its state) and while it is stopped (its
// state); an approval for every sandbox too.
func TestRemoveEgressRule(t *testing.T) {
	te := egressEngine(t)
	ctx := context.Background()
	info := te.create(t, sandbox.CreateRequest{Network: sandbox.NetworkEgress, Persistent: true})
	for _, r := range []struct {
		target string
		a      sandbox.EgressAnswer
	}{{"api.example.org", sandbox.EgressAllowSandbox}, {"keep.example.org", sandbox.EgressAllowSandbox},
		{"tracker.example.org:8080", sandbox.EgressDenySandbox}, {"every.example.org", sandbox.EgressAllowGlobal}} {
		if _, err := te.AnswerEgressHost(ctx, info.Name, r.target, r.a); err != nil {
			t.Fatal(err)
		}
	}
	rules := func() string {
		got, err := te.Get(ctx, info.ID)
		if err != nil {
			t.Fatal(err)
		}
		n, err := te.EgressNetwork(ctx, info.ID)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(n.Rules) != fmt.Sprint(got.EgressRules) {
			t.Errorf("the gate has %v, the sandbox's Info %v", n.Rules, got.EgressRules)
		}
		return fmt.Sprint(got.EgressRules)
	}
	if err := te.RemoveEgressRule(ctx, info.Name, "API.example.org"); err != nil {
		t.Fatal(err)
	}
	if got := rules(); got != "{[keep.example.org] [tracker.example.org:8080]}" {
		t.Fatalf("after removing a rule of a running sandbox: %s", got)
	}
	if _, err := te.Stop(ctx, te.owner, info.ID); err != nil {
		t.Fatal(err)
	}
	if err := te.RemoveEgressRule(ctx, info.ID, "tracker.example.org:8080"); err != nil {
		t.Fatal(err)
	}
	if got := rules(); got != "{[keep.example.org] []}" {
		t.Fatalf("after removing a rule of a stopped sandbox: %s", got)
	}
	wantKind(t, te.RemoveEgressRule(ctx, info.ID, "api.example.org"), sandbox.ErrNotFound)
	wantKind(t, te.RemoveEgressRule(ctx, info.ID, "not a host"), sandbox.ErrInvalid)

	if err := te.RemoveEgressApproval(ctx, "every.example.org"); err != nil {
		t.Fatal(err)
	}
	wantKind(t, te.RemoveEgressApproval(ctx, "every.example.org"), sandbox.ErrNotFound)
	te.command(t, info.ID, "true") // starts it again
	if got := rules(); got != "{[keep.example.org] []}" {
		t.Fatalf("after a restart: %s", got)
	}
	if n, _ := te.EgressNetwork(ctx, info.ID); len(n.GlobalAllow) != 0 {
		t.Fatalf("approvals for every sandbox: %v", n.GlobalAllow)
	}
}
