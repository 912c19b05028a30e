package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// demoEgress is the egress gate as the demo shows it: the second sandbox
// (web-scraper) on network "egress" with rules and connections, the third
// (node-build) too, and, with -egress, a request of each that waits for
// the user.
type demoEgress struct {
	pending []sandbox.EgressPending
	nets    map[string]*sandbox.EgressNetwork // by sandbox id
	global  []string
}

// withEgress puts the second sandbox on the gate, and makes requests wait
// when ask is set.
func withEgress(f *fakeBackend, ask bool) *fakeBackend {
	if len(f.boxes) < 2 {
		return f
	}
	now := time.Now()
	scraper := &f.boxes[1]
	scraper.Spec.Network = sandbox.NetworkEgress
	scraper.EgressRules = sandbox.EgressRules{Allow: []string{"api.github.com", "*.githubusercontent.com"}, Deny: []string{"tracker.example.net"}}
	rec := func(ago time.Duration, host string, port int, method, decision, rule string, up, down, ms int64, why string) sandbox.EgressRecord {
		return sandbox.EgressRecord{Time: now.Add(-ago), SandboxID: scraper.ID, Sandbox: scraper.Name, Client: scraper.Owner.Client,
			Host: host, Port: port, Method: method, Decision: decision, Rule: rule, BytesUp: up, BytesDown: down, DurationMS: ms, Error: why}
	}
	f.egress = &demoEgress{
		global: []string{"huggingface.co"},
		nets: map[string]*sandbox.EgressNetwork{scraper.ID: {
			Rules: scraper.EgressRules, GlobalAllow: []string{"huggingface.co"}, Ask: true,
			ConfigAllow: []string{"deb.debian.org", "security.debian.org", "pypi.org", "files.pythonhosted.org", "registry.npmjs.org"},
			ConfigDeny:  []string{"*.doubleclick.net"},
			Recent: []sandbox.EgressRecord{
				rec(6*time.Minute, "pypi.org", 443, "CONNECT", "allow", `allow "pypi.org" (default)`, 3_912, 148_220, 640, ""),
				rec(6*time.Minute-4*time.Second, "files.pythonhosted.org", 443, "CONNECT", "allow", `allow "files.pythonhosted.org" (default)`, 21_480, 11_906_113, 2_310, ""),
				rec(5*time.Minute, "api.github.com", 443, "CONNECT", "allow", `allow "api.github.com" (sandbox)`, 2_210, 61_004, 480, ""),
				rec(4*time.Minute, "raw.githubusercontent.com", 443, "CONNECT", "allow", `allow "*.githubusercontent.com" (sandbox)`, 1_820, 402_315, 910, ""),
				rec(3*time.Minute, "169.254.169.254", 80, "GET", "deny", "address check", 0, 0, 0,
					"sandtray egress: 169.254.169.254:80 is a link-local (cloud metadata) address; only an explicit rule allows it"),
				rec(2*time.Minute, "tracker.example.net", 443, "CONNECT", "deny", `deny "tracker.example.net" (sandbox)`, 0, 0, 0,
					"sandtray egress: tracker.example.net:443 is denied for this sandbox"),
				rec(70*time.Second, "news.ycombinator.com", 443, "CONNECT", "allow", "allowed once by the user", 4_022, 88_731, 14_200, ""),
				rec(20*time.Second, "cdn.jsdelivr.net", 443, "CONNECT", "deny", "no answer", 0, 0, 60_000,
					"sandtray egress: cdn.jsdelivr.net:443 got no answer from the user within 1m0s (egress.ask_timeout), so it is refused"),
			},
		}},
	}
	if len(f.boxes) > 2 {
		build := &f.boxes[2]
		build.Spec.Network = sandbox.NetworkEgress
		f.egress.nets[build.ID] = &sandbox.EgressNetwork{Ask: true}
		if ask {
			f.egress.pending = []sandbox.EgressPending{
				{ID: "3d5b7f10", SandboxID: build.ID, Sandbox: build.Name, Client: build.Owner.Client, Host: "registry.yarnpkg.com", Port: 443,
					Reason: "yarn install: the project's yarn.lock names the Yarn registry", Since: now.Add(-4 * time.Second), Deadline: now.Add(56 * time.Second)},
				{ID: "7c1e9a02", SandboxID: scraper.ID, Sandbox: scraper.Name, Client: scraper.Owner.Client, Host: "api.openweathermap.org", Port: 443,
					Method: "CONNECT", Since: now.Add(-2 * time.Second), Deadline: now.Add(58 * time.Second)},
			}
		}
	}
	return f
}

// AnswerEgressHost adds the sandbox's "always" rule for target (the
// Network tab's Allow and Deny), as the engine does when nothing waits.
func (f *fakeBackend) AnswerEgressHost(_ context.Context, ref, target string, a sandbox.EgressAnswer) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.egress == nil || f.egress.nets[ref] == nil {
		return 0, fmt.Errorf("sandbox %s has no network through the egress gate: %w", ref, sandbox.ErrNotFound)
	}
	n := f.egress.nets[ref]
	switch a {
	case sandbox.EgressAllowSandbox:
		n.Rules.Allow = append(n.Rules.Allow, target)
	case sandbox.EgressDenySandbox:
		n.Rules.Deny = append(n.Rules.Deny, target)
	}
	f.publishLocked()
	return 0, nil
}

func (f *fakeBackend) AnswerEgress(_ context.Context, id string, a sandbox.EgressAnswer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.egress
	if e == nil {
		return fmt.Errorf("no pending request %q: %w", id, sandbox.ErrNotFound)
	}
	i := slices.IndexFunc(e.pending, func(p sandbox.EgressPending) bool { return p.ID == id })
	if i < 0 {
		return fmt.Errorf("no pending request %q: %w", id, sandbox.ErrNotFound)
	}
	p := e.pending[i]
	e.pending = slices.Delete(e.pending, i, i+1)
	if n := e.nets[p.SandboxID]; n != nil {
		switch a {
		case sandbox.EgressAllowSandbox:
			n.Rules.Allow = append(n.Rules.Allow, p.Host)
		case sandbox.EgressDenySandbox:
			n.Rules.Deny = append(n.Rules.Deny, p.Host)
		}
	}
	if a == sandbox.EgressAllowGlobal {
		e.global = append(e.global, p.Host)
	}
	f.publishLocked()
	return nil
}

func (f *fakeBackend) EgressNetwork(_ context.Context, ref string) (sandbox.EgressNetwork, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.egress == nil || f.egress.nets[ref] == nil {
		return sandbox.EgressNetwork{}, nil
	}
	n := *f.egress.nets[ref]
	n.GlobalAllow = slices.Clone(f.egress.global)
	return n, nil
}

func (f *fakeBackend) RemoveEgressRule(_ context.Context, ref, pattern string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.egress == nil || f.egress.nets[ref] == nil {
		return fmt.Errorf("no egress rule %q: %w", pattern, sandbox.ErrNotFound)
	}
	n := f.egress.nets[ref]
	not := func(p string) bool { return p == pattern }
	n.Rules.Allow = slices.DeleteFunc(n.Rules.Allow, not)
	n.Rules.Deny = slices.DeleteFunc(n.Rules.Deny, not)
	f.publishLocked()
	return nil
}

func (f *fakeBackend) RemoveEgressApproval(_ context.Context, pattern string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.egress != nil {
		f.egress.global = slices.DeleteFunc(f.egress.global, func(p string) bool { return p == pattern })
	}
	f.publishLocked()
	return nil
}
