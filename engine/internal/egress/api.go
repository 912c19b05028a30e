package egress

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/sandtray/sandtray/engine/internal/egress/hostrule"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Target parses "host" or "host:port" as the command line and
// request_network name a host: no wildcard; the port defaults to def.
func Target(s string, def int) (host string, port int, err error) {
	r, err := hostrule.Parse(s, hostrule.SourceSandbox)
	if err != nil {
		return "", 0, err
	}
	if r.Wildcard {
		return "", 0, fmt.Errorf("%q is a wildcard; name one host, such as pypi.org or example.com:8080: %w", s, sandbox.ErrInvalid)
	}
	port = r.Port
	if port == 0 {
		port = def
	}
	return r.Host, port, nil
}

// AnswerHost answers sandbox id's pending requests for host (any port when
// port is 0) with a. When none is pending, AllowSandbox, AllowGlobal and
// DenySandbox add their rule for later (host, with its port when given),
// and AllowOnce and DenyOnce are sandbox.ErrNotFound. It returns how many
// pending requests it answered.
func (g *Gate) AnswerHost(id, host string, port int, a Answer) (int, error) {
	host, err := hostrule.Host(host)
	if err != nil {
		return 0, err
	}
	g.mu.Lock()
	b := g.boxes[id]
	if b == nil {
		g.mu.Unlock()
		return 0, fmt.Errorf("sandbox %s has no network through the egress gate (it is not running, or its network is not \"egress\"): %w", id, sandbox.ErrNotFound)
	}
	var matched []*pending
	for _, p := range g.pending {
		if p.SandboxID == id && p.Host == host && (port == 0 || p.Port == port) {
			matched = append(matched, p)
		}
	}
	var saves []func()
	if len(matched) == 0 {
		pattern := host
		if port != 0 {
			pattern = hostPort(host, port)
		}
		switch a {
		case AllowSandbox, DenySandbox:
			saves = append(saves, g.addBoxRule(b, pattern, a == AllowSandbox))
		case AllowGlobal:
			saves = append(saves, g.addGlobalRule(pattern))
		default:
			name := b.Name
			g.mu.Unlock()
			return 0, fmt.Errorf("nothing from sandbox %s is waiting for %s; `sandtray egress pending` lists what waits, and --always allows it from now on: %w", name, host, sandbox.ErrNotFound)
		}
		g.settleLocked()
	}
	for _, p := range matched {
		save, err := g.answerLocked(p, a)
		if err != nil {
			g.mu.Unlock()
			return 0, err
		}
		saves = append(saves, save)
	}
	g.mu.Unlock()
	for _, s := range saves {
		s()
	}
	g.changed()
	return len(matched), nil
}

// Refusal is a host request_network could not have, and why.
type Refusal = sandbox.EgressRefusal

// RequestResult is what request_network answers.
type RequestResult = sandbox.EgressRequestResult

// Request is a model asking up front for hosts ("host" or "host:port",
// 443 by default) of sandbox id, with a reason the user sees: each host a
// rule allows is allowed, each a rule or the address checks refuse is
// denied, and the others wait for the user as pending requests (when
// egress.ask is on; else they are denied). It never waits.
func (g *Gate) Request(ctx context.Context, id string, hosts []string, reason string) (RequestResult, error) {
	res := RequestResult{Allowed: []string{}, Denied: []Refusal{}, Pending: []string{}}
	if !g.Registered(id) {
		return res, fmt.Errorf("the sandbox's network is not \"egress\" (or it is not running), so request_network cannot open anything for it; create a sandbox with network \"egress\": %w", sandbox.ErrInvalid)
	}
	for _, h := range hosts {
		host, port, err := Target(h, 443)
		if err != nil {
			res.Denied = append(res.Denied, Refusal{Host: h, Why: err.Error()})
			continue
		}
		r := request{box: id, host: host, port: port}
		v := g.decideUpFront(ctx, r, reason)
		switch {
		case v.allow:
			res.Allowed = append(res.Allowed, h)
		case v.rule == "pending":
			res.Pending = append(res.Pending, h)
		default:
			res.Denied = append(res.Denied, Refusal{Host: h, Why: strings.TrimPrefix(v.body, "sandtray egress: ")})
		}
	}
	return res, nil
}

// decideUpFront is decide for request_network: where decide would ask, the
// request is added as pending (rule "pending") instead of waited for.
func (g *Gate) decideUpFront(ctx context.Context, r request, reason string) verdict {
	g.mu.Lock()
	b := g.boxes[r.box]
	ask := b != nil && g.o.Ask && !b.Offline
	g.mu.Unlock()
	if !ask {
		return g.decide(ctx, r)
	}
	probe := r
	probe.method = "request_network"
	v := g.decideNoAsk(ctx, probe)
	if v.rule != "would ask" {
		return v
	}
	if g.addPending(r, reason, true) == nil {
		g.mu.Lock()
		name := ""
		if b := g.boxes[r.box]; b != nil {
			name = b.Name
		}
		g.mu.Unlock()
		return tooManyAsks(r, name)
	}
	return verdict{rule: "pending"}
}

// decideNoAsk is decide with asking replaced by the verdict "would ask".
func (g *Gate) decideNoAsk(ctx context.Context, r request) verdict {
	return g.decideWith(ctx, r, func(context.Context, request, string, []netip.Addr) verdict {
		return verdict{rule: "would ask"}
	})
}

// HostStats sums a sandbox's decisions for one host.
type HostStats = sandbox.EgressHost

// Network is one sandbox's view of the gate.
type Network = sandbox.EgressNetwork

// Network returns sandbox id's rules and recent decisions; false when the
// gate does not know it.
func (g *Gate) Network(id string) (Network, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.boxes[id]
	if b == nil {
		return Network{}, false
	}
	n := Network{Rules: rulesOf(b), GlobalAllow: globalPatterns(g.global), Ask: g.o.Ask && !b.Offline,
		Recent: append([]Record(nil), b.recent...)}
	if !b.Offline {
		n.ConfigAllow = globalPatterns(g.allow)
	}
	n.ConfigDeny = globalPatterns(g.deny)
	for _, h := range b.hosts {
		n.Hosts = append(n.Hosts, h.HostStats)
	}
	sortHosts(n.Hosts)
	return n, true
}

// HostPort joins a host and port as the gate names them.
func HostPort(host string, port int) string { return hostPort(host, port) }

// RemoveRule takes pattern off sandbox id's own rules, allow or deny (the
// approvals the user gave it), saves them, and reports whether it was
// there. A bad pattern wraps sandbox.ErrInvalid; an unknown sandbox is
// sandbox.ErrNotFound. Connections already through are not ended.
func (g *Gate) RemoveRule(id, pattern string) (bool, error) {
	rule, err := hostrule.Parse(pattern, hostrule.SourceSandbox)
	if err != nil {
		return false, err
	}
	same := func(r hostrule.Rule) bool { return r.String() == rule.String() }
	g.mu.Lock()
	b := g.boxes[id]
	if b == nil {
		g.mu.Unlock()
		return false, fmt.Errorf("sandbox %s is not on the egress gate: %w", id, sandbox.ErrNotFound)
	}
	n := len(b.allow) + len(b.deny)
	b.allow = slices.DeleteFunc(b.allow, same)
	b.deny = slices.DeleteFunc(b.deny, same)
	removed := len(b.allow)+len(b.deny) < n
	rules, save := rulesOf(b), b.Save
	b.Rules = rules
	g.mu.Unlock()
	if !removed {
		return false, nil
	}
	if save != nil {
		save(rules)
	}
	g.changed()
	return true, nil
}

// RemoveGlobal takes pattern off the approvals for every sandbox (those an
// "allow for all sandboxes" answer added), saves them, and reports whether
// it was there. The config's rules are the config's: it does not touch them.
func (g *Gate) RemoveGlobal(pattern string) (bool, error) {
	rule, err := hostrule.Parse(pattern, hostrule.SourceGlobal)
	if err != nil {
		return false, err
	}
	g.mu.Lock()
	n := len(g.global)
	g.global = slices.DeleteFunc(g.global, func(r hostrule.Rule) bool { return r.String() == rule.String() })
	removed := len(g.global) < n
	list := globalPatterns(g.global)
	g.mu.Unlock()
	if !removed {
		return false, nil
	}
	if err := saveGlobal(g.o.GlobalFile, list); err != nil {
		return true, fmt.Errorf("save the approvals for every sandbox to %s: %w", g.o.GlobalFile, err)
	}
	g.changed()
	return true, nil
}
