package network

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/sandtray/sandtray/engine/internal/egress"
	"github.com/sandtray/sandtray/engine/internal/egress/hostrule"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// The egress gate's public API: what the tray app, the control endpoint
// (`sandtray egress …`) and the MCP tools see of it. Pending requests are
// also in every snapshot (sandbox.Snapshot.Egress), and each sandbox's own
// rules in its Info (EgressRules), so a watcher hears of them as they change.

// EgressPending lists the requests waiting for the user, oldest first.
func (n *Network) EgressPending() []sandbox.EgressPending { return n.gate.Pending() }

// AnswerEgress answers the pending request id (EgressPending's ID) with a:
// allow once, always for its sandbox, always for every sandbox, deny once,
// or deny always for its sandbox. Only the user may call it: it is never
// reachable through MCP tools or from inside a sandbox.
func (n *Network) AnswerEgress(ctx context.Context, id string, a sandbox.EgressAnswer) error {
	return n.gate.Answer(id, a)
}

// AnswerEgressHost answers the pending requests of sandbox ref (id, id
// prefix or name) for target ("host" or "host:port") with a, and returns
// how many it answered. With none pending, the "always" answers add their
// rule for later; once and deny are sandbox.ErrNotFound. Only the user may
// call it, as AnswerEgress.
func (n *Network) AnswerEgressHost(ctx context.Context, ref, target string, a sandbox.EgressAnswer) (int, error) {
	host, port, err := egress.Target(target, 0)
	if err != nil {
		return 0, err
	}
	b, err := n.host.Resolve(ref)
	if err != nil {
		return 0, err
	}
	answered, err := n.gate.AnswerHost(b.ID(), host, port, a)
	if err != nil {
		return 0, fmt.Errorf("sandbox %s: %w", b.Name(), err)
	}
	return answered, nil
}

// RequestNetwork is a model asking up front for hosts ("host" or
// "host:port") of sandbox ref, with a reason the user sees: the hosts a
// rule allows, those refused, and those now waiting for the user. It never
// waits for the answer.
func (n *Network) RequestNetwork(ctx context.Context, owner sandbox.Owner, ref string, hosts []string, reason string) (sandbox.EgressRequestResult, error) {
	if len(hosts) == 0 || len(hosts) > 32 {
		return sandbox.EgressRequestResult{}, fmt.Errorf("give 1 to 32 hosts, such as [\"pypi.org\"] or [\"api.example.com:8443\"]: %w", sandbox.ErrInvalid)
	}
	b, release, err := n.host.Acquire(ref)
	if err != nil {
		return sandbox.EgressRequestResult{}, err
	}
	defer release()
	if network := b.Spec().Network; network != sandbox.NetworkEgress {
		return sandbox.EgressRequestResult{}, fmt.Errorf("sandbox %s has network %q; request_network is for sandboxes created with network \"egress\": create one with create_sandbox network \"egress\": %w", b.Name(), network, sandbox.ErrInvalid)
	}
	if err := b.EnsureRunning(ctx); err != nil {
		return sandbox.EgressRequestResult{}, err
	}
	res, err := n.gate.Request(ctx, b.ID(), hosts, reason)
	if err == nil {
		n.host.Record(b.ID(), sandbox.Activity{Tool: "request_network", Client: owner.Client, Input: fmt.Sprintf("%v: %s", hosts, reason),
			Stdout: fmt.Sprintf("allowed %v, pending %v, denied %d", res.Allowed, res.Pending, len(res.Denied))})
	}
	return res, err
}

// EgressNetwork returns sandbox ref's view of the gate: its rules, the
// approvals for every sandbox and the config's, the hosts it reached or
// tried with bytes each way, and its latest decisions (at most 200).
func (n *Network) EgressNetwork(ctx context.Context, ref string) (sandbox.EgressNetwork, error) {
	b, err := n.host.Resolve(ref)
	if err != nil {
		return sandbox.EgressNetwork{}, err
	}
	rules := b.State().Egress
	if view, ok := n.gate.Network(b.ID()); ok {
		return view, nil
	}
	return sandbox.EgressNetwork{Rules: rules}, nil
}

// RemoveEgressRule takes pattern ("host", "*.domain", "host:port") off
// sandbox ref's own egress rules, allow or deny, running or not: the host
// is asked about (or refused) again from the next connection. A pattern
// the sandbox has no rule for is sandbox.ErrNotFound. Only the user may
// call it, as AnswerEgress.
func (n *Network) RemoveEgressRule(ctx context.Context, ref, pattern string) error {
	rule, err := hostrule.Parse(pattern, hostrule.SourceSandbox)
	if err != nil {
		return err
	}
	b, err := n.host.Resolve(ref)
	if err != nil {
		return err
	}
	want := rule.String()
	removed := false
	// The state first: a start that reads it now registers without the rule.
	b.SaveEgress(func(rules *sandbox.EgressRules) {
		keep := func(list []string) []string {
			return slices.DeleteFunc(slices.Clone(list), func(p string) bool {
				r, err := hostrule.Parse(p, hostrule.SourceSandbox)
				if err == nil && r.String() == want {
					removed = true
					return true
				}
				return false
			})
		}
		rules.Allow, rules.Deny = keep(rules.Allow), keep(rules.Deny)
	})
	if n.gate.Registered(b.ID()) {
		ok, err := n.gate.RemoveRule(b.ID(), want)
		if err != nil && !errors.Is(err, sandbox.ErrNotFound) { // it stopped meanwhile: the state is what counts
			return err
		}
		removed = removed || ok
	}
	if !removed {
		return fmt.Errorf("sandbox %s has no egress rule %q; `sandtray egress rules %s` lists its rules: %w", b.Name(), want, b.Name(), sandbox.ErrNotFound)
	}
	n.host.Publish()
	return nil
}

// RemoveEgressApproval takes pattern off the approvals for every sandbox
// (what "allow for all sandboxes" added; the config's rules stay the
// config's). One that is not there is sandbox.ErrNotFound. Only the user
// may call it, as AnswerEgress.
func (n *Network) RemoveEgressApproval(ctx context.Context, pattern string) error {
	ok, err := n.gate.RemoveGlobal(pattern)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no approval %q for every sandbox: %w", pattern, sandbox.ErrNotFound)
	}
	return nil
}
