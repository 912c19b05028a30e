package egress

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/internal/egress/hostrule"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Answer is the user's answer to a pending request.
type Answer = sandbox.EgressAnswer

// The answers: allow this once, always for this sandbox, always for every
// sandbox; deny this once, or always for this sandbox.
const (
	AllowOnce    = sandbox.EgressAllowOnce
	AllowSandbox = sandbox.EgressAllowSandbox
	AllowGlobal  = sandbox.EgressAllowGlobal
	DenyOnce     = sandbox.EgressDeny
	DenySandbox  = sandbox.EgressDenySandbox
)

// Answers lists every answer, for protocols that check them.
var Answers = []Answer{AllowOnce, AllowSandbox, AllowGlobal, DenyOnce, DenySandbox}

// onceGrantTTL is how long an allow-once of a request a model made up front
// (request_network) lets connections to the host through: no connection
// waited for it, so "once" is the next few minutes.
const onceGrantTTL = 10 * time.Minute

// Pending is a request waiting for the user (see sandbox.EgressPending).
type Pending = sandbox.EgressPending

// pending is a Pending with its waiters; guarded by Gate.mu.
type pending struct {
	Pending
	done    chan struct{}
	res     answerResult
	once    sync.Once
	waiters int  // connections waiting on it
	upFront bool // made by request_network
}

// answerResult is how a pending request ended.
type answerResult struct {
	allow bool
	rule  string // for an allow: what allowed it
	why   string // for a refusal: "was denied by the user", …
}

func (p *pending) finish(r answerResult) {
	p.once.Do(func() {
		p.res = r
		close(p.done)
	})
}

// ask makes r wait for the user (joining a request already pending for the
// same sandbox, host and port) until the answer, the deadline or ctx.
func (g *Gate) ask(ctx context.Context, r request, name string, addrs []netip.Addr) verdict {
	p := g.addPending(r, "", false)
	if p == nil {
		return tooManyAsks(r, name)
	}
	defer g.leave(p)
	timer := time.NewTimer(time.Until(p.Deadline))
	defer timer.Stop()
	select {
	case <-p.done:
	case <-timer.C:
		g.expire(p)
	case <-ctx.Done():
		return deny(r, "gone", "was abandoned by the client while it waited for the user")
	}
	<-p.done
	if p.res.allow {
		return verdict{allow: true, rule: p.res.rule, addrs: addrs}
	}
	return deny(r, p.res.rule, p.res.why)
}

// What waits for the user at once is bounded (F63): a sandbox's requests,
// and everyone's. A request past either is refused, not kept.
const (
	pendingPerBox = 16
	pendingMax    = 256
	maxReason     = 1000 // bytes of a request_network reason kept
)

// tooManyAsks is the refusal of a request past pendingPerBox or pendingMax.
func tooManyAsks(r request, name string) verdict {
	return deny(r, "too many asks", fmt.Sprintf("is refused: %d requests of sandbox %s (or %d in all) already wait for the user; they answer those first (`sandtray egress pending`, or the Sandtray app), or the requests time out", pendingPerBox, name, pendingMax))
}

// addPending returns the pending request of r's sandbox for its host and
// port, made now when there is none, with one more waiter unless upFront;
// nil when a new one would pass pendingPerBox or pendingMax.
func (g *Gate) addPending(r request, reason string, upFront bool) *pending {
	g.mu.Lock()
	var p *pending
	mine := 0
	for _, q := range g.pending {
		if q.SandboxID == r.box && q.Host == r.host && q.Port == r.port {
			p = q
			break
		}
		if q.SandboxID == r.box {
			mine++
		}
	}
	if p == nil && (mine >= pendingPerBox || len(g.pending) >= pendingMax) {
		g.mu.Unlock()
		return nil
	}
	if len(reason) > maxReason {
		reason = strings.ToValidUTF8(reason[:maxReason], "") + "…"
	}
	if p == nil {
		now := time.Now()
		b := g.boxes[r.box]
		p = &pending{Pending: Pending{ID: sandbox.RandomHex(4), SandboxID: r.box, Host: r.host, Port: r.port,
			Method: r.method, Since: now, Deadline: now.Add(g.o.AskTimeout)}, done: make(chan struct{})}
		if b != nil {
			p.Sandbox, p.Client = b.Name, b.Client
		}
		g.pending[p.ID] = p
	}
	if reason != "" && p.Reason == "" {
		p.Reason = reason
	}
	if upFront {
		p.upFront = true
	} else {
		p.waiters++
	}
	g.mu.Unlock()
	g.changed()
	return p
}

// leave drops one waiter of p; the last one of a connection's request
// (not a model's up-front one) takes it off the list.
func (g *Gate) leave(p *pending) {
	g.mu.Lock()
	p.waiters--
	drop := p.waiters == 0 && !p.upFront && g.pending[p.ID] == p
	if drop {
		delete(g.pending, p.ID)
		p.finish(answerResult{rule: "gone", why: "was abandoned by the client while it waited for the user"})
	}
	g.mu.Unlock()
	if drop {
		g.changed()
	}
}

// expire refuses p at its deadline, unless it was answered meanwhile.
func (g *Gate) expire(p *pending) {
	g.mu.Lock()
	if g.pending[p.ID] == p {
		delete(g.pending, p.ID)
	}
	p.finish(answerResult{rule: "no answer", why: fmt.Sprintf("got no answer from the user within %s (egress.ask_timeout), so it is refused; the user can allow it with `sandtray egress allow %s %s --always` or in the Sandtray app", g.o.AskTimeout, p.Sandbox, hostOnly(request{host: p.Host, port: p.Port}))})
	g.mu.Unlock()
	g.changed()
}

// Pending lists the requests waiting for the user, oldest first. Requests
// a model made up front that nobody answered in time are dropped here. Its
// lock is a leaf: the engine calls it under its own.
func (g *Gate) Pending() []Pending {
	now := time.Now()
	g.mu.Lock()
	out := make([]Pending, 0, len(g.pending))
	for id, p := range g.pending {
		if p.upFront && p.waiters == 0 && now.After(p.Deadline) {
			delete(g.pending, id)
			p.finish(answerResult{rule: "no answer", why: "got no answer from the user in time"})
			continue
		}
		out = append(out, p.Pending)
	}
	g.mu.Unlock()
	slices.SortFunc(out, func(a, b Pending) int { return cmp.Or(a.Since.Compare(b.Since), strings.Compare(a.ID, b.ID)) })
	return out
}

// Answer answers the pending request id. Allowing for the sandbox or for
// every sandbox adds a rule (the host, with the port when it is not 80 or
// 443), which also lets through the other pending requests it covers;
// DenySandbox adds a deny rule. An unknown id is sandbox.ErrNotFound.
func (g *Gate) Answer(id string, a Answer) error {
	g.mu.Lock()
	p := g.pending[id]
	if p == nil {
		g.mu.Unlock()
		return fmt.Errorf("no pending request %q: it was answered, timed out or its client gave up; `sandtray egress pending` lists the ones waiting: %w", id, sandbox.ErrNotFound)
	}
	save, err := g.answerLocked(p, a)
	g.mu.Unlock()
	if err != nil {
		return err
	}
	save()
	g.changed()
	return nil
}

// answerLocked applies a to p and returns what saves the rules changed.
// Called under g.mu.
func (g *Gate) answerLocked(p *pending, a Answer) (save func(), err error) {
	save = func() {}
	r := request{box: p.SandboxID, host: p.Host, port: p.Port}
	pattern := hostOnly(r)
	switch a {
	case AllowOnce:
		delete(g.pending, p.ID)
		if p.upFront {
			if b := g.boxes[p.SandboxID]; b != nil {
				rule, _ := hostrule.Parse(pattern, hostrule.SourceOnce)
				g.seq++
				b.grants = append(b.grants, grant{rule: rule, until: time.Now().Add(onceGrantTTL), id: g.seq})
			}
		}
		p.finish(answerResult{allow: true, rule: "allowed once by the user"})
	case AllowSandbox, DenySandbox:
		b := g.boxes[p.SandboxID]
		if b == nil {
			return nil, fmt.Errorf("sandbox %s is gone: %w", p.Sandbox, sandbox.ErrNotFound)
		}
		save = g.addBoxRule(b, pattern, a == AllowSandbox)
		if a == DenySandbox {
			delete(g.pending, p.ID)
			p.finish(answerResult{rule: "deny " + strconvQuote(pattern) + " (sandbox)", why: fmt.Sprintf("was denied by the user for sandbox %s", p.Sandbox)})
		}
	case AllowGlobal:
		save = g.addGlobalRule(pattern)
	case DenyOnce:
		delete(g.pending, p.ID)
		p.finish(answerResult{rule: "denied by the user", why: "was denied by the user"})
	default:
		return nil, fmt.Errorf("answer %q is not one of once, sandbox, global, deny, deny_sandbox: %w", a, sandbox.ErrInvalid)
	}
	g.settleLocked()
	return save, nil
}

// settleLocked lets through every pending request a rule now covers.
// Called under g.mu.
func (g *Gate) settleLocked() {
	for id, p := range g.pending {
		b := g.boxes[p.SandboxID]
		if b == nil {
			continue
		}
		if rule, ok := g.allowRule(b, request{box: p.SandboxID, host: p.Host, port: p.Port}); ok {
			delete(g.pending, id)
			p.finish(answerResult{allow: true, rule: "allow " + quoteRule(rule)})
		}
	}
}

// addBoxRule adds pattern to b's allow (allow) or deny list, dropping it
// from the other, and returns what saves b's rules. Called under g.mu.
func (g *Gate) addBoxRule(b *box, pattern string, allow bool) (save func()) {
	rule, err := hostrule.Parse(pattern, hostrule.SourceSandbox)
	if err != nil {
		return func() {}
	}
	same := func(r hostrule.Rule) bool { return r.String() == rule.String() }
	b.allow = slices.DeleteFunc(b.allow, same)
	b.deny = slices.DeleteFunc(b.deny, same)
	if allow {
		b.allow = append(b.allow, rule)
	} else {
		b.deny = append(b.deny, rule)
	}
	rules, fn := rulesOf(b), b.Save
	b.Rules = rules
	return func() {
		if fn != nil {
			fn(rules)
		}
	}
}

func rulesOf(b *box) SandboxRules {
	var r SandboxRules
	for _, a := range b.allow {
		r.Allow = append(r.Allow, a.String())
	}
	for _, d := range b.deny {
		r.Deny = append(r.Deny, d.String())
	}
	return r
}

// addGlobalRule adds pattern to the approvals for every sandbox and
// returns what saves them. Called under g.mu.
func (g *Gate) addGlobalRule(pattern string) (save func()) {
	rule, err := hostrule.Parse(pattern, hostrule.SourceGlobal)
	if err != nil || slices.ContainsFunc(g.global, func(r hostrule.Rule) bool { return r.String() == rule.String() }) {
		return func() {}
	}
	g.global = append(g.global, rule)
	list := globalPatterns(g.global)
	return func() {
		if err := saveGlobal(g.o.GlobalFile, list); err != nil {
			g.log.Warn("egress: save the global approvals", "file", g.o.GlobalFile, "err", err)
		}
	}
}

func strconvQuote(s string) string { return `"` + s + `"` }
