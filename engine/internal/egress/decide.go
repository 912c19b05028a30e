package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/sandtray/sandtray/engine/internal/egress/hostrule"
)

// verdict is the gate's decision on one connection.
type verdict struct {
	allow bool
	rule  string       // what decided, for the record: `allow "pypi.org" (default)`
	body  string       // a refusal's one line, naming the host and what to do
	addrs []netip.Addr // the checked addresses to dial, in order
	// status is the refusal's HTTP status: 403 for a decision, 502 when
	// the name did not resolve.
	status int
}

// request is one connection or plain-HTTP request to decide.
type request struct {
	box    string // sandbox id, from the channel
	host   string // normalised
	port   int
	method string
}

func (r request) target() string { return hostPort(r.host, r.port) }

func hostPort(host string, port int) string {
	if ip, err := netip.ParseAddr(host); err == nil && ip.Is6() {
		return "[" + host + "]:" + strconv.Itoa(port)
	}
	return host + ":" + strconv.Itoa(port)
}

// decide applies the rules to r: deny, then allow, then ask. Names are
// resolved here and the addresses checked; a name no rule covers is asked
// about only when it resolves to ordinary public addresses.
func (g *Gate) decide(ctx context.Context, r request) verdict {
	return g.decideWith(ctx, r, g.ask)
}

// askFunc makes a request no rule covers wait for the user.
type askFunc func(ctx context.Context, r request, name string, addrs []netip.Addr) verdict

// decideWith is decide, asking with ask.
func (g *Gate) decideWith(ctx context.Context, r request, ask askFunc) verdict {
	g.mu.Lock()
	b := g.boxes[r.box]
	if b == nil {
		g.mu.Unlock()
		return verdict{rule: "unknown sandbox", body: fmt.Sprintf("sandtray egress: %s is refused: this sandbox is not on the egress gate", r.target()), status: 403}
	}
	name := b.Name
	// Deny first, for every request: r.host is normal (hostrule.Host), as
	// every rule's host is, so one comparison covers every way of writing it.
	if d, ok := firstDeny(r, b.deny, g.deny); ok {
		g.mu.Unlock()
		return deny(r, "deny "+quoteRule(d), denyAdvice(d, r, name))
	}
	if r.host == HostAlias {
		v := g.hostVerdict(r, name)
		if v.allow {
			if d, a, ok := deniedAddr(r, v.addrs, b.deny, g.deny); ok {
				v = addrDenied(r, "reaches", a, d, name)
			}
		}
		g.mu.Unlock()
		return v
	}
	denies := [][]hostrule.Rule{b.deny, g.deny}
	rule, ok := g.allowRule(b, r)
	offline, asking := b.Offline, g.o.Ask && !b.Offline
	portOnly := !ok && hostCovered(b, g, r)
	g.mu.Unlock()

	if !ok && hostrule.IsIPLiteral(r.host) {
		return deny(r, "IP literal", fmt.Sprintf("is an IP address no rule names; use the host's name, or the user can allow it with `sandtray egress allow %s %s --always`", name, r.target()))
	}
	// A name no rule allows and nobody will be asked about is refused
	// unresolved: the gate's lookups are no channel out for it.
	switch {
	case !ok && offline:
		return deny(r, "network none", fmt.Sprintf("is refused: sandbox %s has network \"none\", and reaches only the package hosts of install_packages while it runs", name))
	case !ok && !asking && portOnly:
		return deny(r, "port not allowed", fmt.Sprintf("is refused: a rule allows the host on ports 80 and 443 only; the user can allow this port with `sandtray egress allow %s %s --always` or in the Sandtray app", name, r.target()))
	case !ok && !asking:
		return deny(r, "no rule", fmt.Sprintf("is not on the allow list; the user can allow it with `sandtray egress allow %s %s --always` or in the Sandtray app, or ask with request_network", name, hostOnly(r)))
	}
	addrs, err := g.resolve(ctx, r.host)
	if err != nil {
		return verdict{rule: "no such host", status: 502,
			body: fmt.Sprintf("sandtray egress: could not resolve %s: %s", r.host, lookupWhy(err))}
	}
	g.mu.Lock()
	d, a, denied := deniedAddr(r, addrs, denies...)
	g.mu.Unlock()
	if denied {
		return addrDenied(r, "resolves to", a, d, name)
	}
	for _, a := range addrs {
		if what := Classify(a); what != "" && !(ok && rule.Explicit()) {
			return deny(r, "special address "+a.String(), fmt.Sprintf("resolves to %s, %s, which only a rule naming the host exactly in [egress] allow of the user's config.toml allows", a, what))
		}
	}
	if ok {
		return verdict{allow: true, rule: "allow " + quoteRule(rule), addrs: addrs}
	}
	return ask(ctx, r, name, addrs)
}

// hostVerdict decides a connection to HostAlias: the host's 127.0.0.1,
// on the ports of egress.host_ports only.
func (g *Gate) hostVerdict(r request, name string) verdict {
	if slices.Contains(g.o.HostPorts, r.port) {
		return verdict{allow: true, rule: "egress.host_ports " + strconv.Itoa(r.port), addrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}}
	}
	return deny(r, "egress.host_ports", fmt.Sprintf("is refused: port %d of the host is not in egress.host_ports; the user can add it there in Sandtray's config.toml (sandbox %s)", r.port, name))
}

// deniedAddr is the first deny rule naming an IP literal that covers one
// of addrs (or the IPv4 address one carries) on r's port: a deny of an
// address holds for every name that resolves to it. Called under g.mu (the
// lists are the gate's).
func deniedAddr(r request, addrs []netip.Addr, lists ...[]hostrule.Rule) (hostrule.Rule, netip.Addr, bool) {
	for _, l := range lists {
		for _, d := range l {
			if !d.IP.IsValid() || d.Port != 0 && d.Port != r.port {
				continue
			}
			for _, a := range addrs {
				if a.Unmap() == d.IP || embedded(a.Unmap()) == d.IP {
					return d, a, true
				}
			}
		}
	}
	return hostrule.Rule{}, netip.Addr{}, false
}

// lookupWhy says in a few words why a name did not resolve, for a refusal
// (not the resolver's own error text).
func lookupWhy(err error) string {
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		return "no such name; check its spelling"
	case errors.As(err, &dns) && dns.IsTimeout, errors.Is(err, context.DeadlineExceeded):
		return "the DNS server did not answer in time; try again"
	case errors.Is(err, errNoAddress):
		return "the name has no address"
	}
	return "the lookup failed; try again"
}

// errNoAddress is a lookup that answered with no address.
var errNoAddress = errors.New("no address")

// firstDeny is the first deny rule covering r: the sandbox's, then the config's.
func firstDeny(r request, lists ...[]hostrule.Rule) (hostrule.Rule, bool) {
	for _, l := range lists {
		for _, d := range l {
			if d.Denies(r.host, r.port) {
				return d, true
			}
		}
	}
	return hostrule.Rule{}, false
}

// allowRule is the first allow rule covering r: grants (installs, answers
// of once), the sandbox's approvals, then, unless it is offline, the
// approvals for every sandbox and the config's list. Called under g.mu.
func (g *Gate) allowRule(b *box, r request) (hostrule.Rule, bool) {
	now := time.Now()
	for _, gr := range b.grants {
		if (gr.until.IsZero() || now.Before(gr.until)) && gr.rule.Allows(r.host, r.port) {
			return gr.rule, true
		}
	}
	lists := [][]hostrule.Rule{b.allow}
	if !b.Offline {
		lists = append(lists, g.global, g.allow)
	}
	for _, l := range lists {
		for _, a := range l {
			if a.Allows(r.host, r.port) {
				return a, true
			}
		}
	}
	return hostrule.Rule{}, false
}

// hostCovered reports whether some allow rule covers r's host on another
// port. Called under g.mu.
func hostCovered(b *box, g *Gate, r request) bool {
	for _, l := range [][]hostrule.Rule{b.allow, g.global, g.allow} {
		for _, a := range l {
			if a.MatchesHost(r.host) {
				return true
			}
		}
	}
	return false
}

// resolve looks host up (an IP literal is itself), IPv4 first.
func (g *Gate) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip.Unmap()}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	addrs, err := g.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, errNoAddress
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, a.Unmap())
	}
	slices.SortStableFunc(out, func(a, b netip.Addr) int {
		switch {
		case a.Is4() && !b.Is4():
			return -1
		case !a.Is4() && b.Is4():
			return 1
		}
		return 0
	})
	return out, nil
}

func deny(r request, rule, advice string) verdict {
	return verdict{rule: rule, status: 403, body: "sandtray egress: " + r.target() + " " + advice}
}

// denyAdvice says what can lift a deny rule: the user's config, or an
// approval of the sandbox's own.
func denyAdvice(d hostrule.Rule, r request, name string) string {
	if d.Source == hostrule.SourceSandbox {
		return fmt.Sprintf("is denied by rule deny %s of sandbox %s; the user can allow it with `sandtray egress allow %s %s --always` or in the Sandtray app", quoteRule(d), name, name, hostOnly(r))
	}
	return fmt.Sprintf("is denied by rule deny %s in the user's config ([egress] deny in config.toml); only the user can change it there", quoteRule(d))
}

// addrDenied is the refusal of r because it reaches a, which deny rule d
// names (an IP literal), with what can lift d.
func addrDenied(r request, verb string, a netip.Addr, d hostrule.Rule, name string) verdict {
	lift := "only the user can change it, in [egress] deny of config.toml"
	if d.Source == hostrule.SourceSandbox {
		lift = fmt.Sprintf("the user can lift it with `sandtray egress allow %s %s --always` or in the Sandtray app", name, d)
	}
	return deny(r, "deny "+quoteRule(d), fmt.Sprintf("%s %s, which is denied by rule deny %s; %s", verb, a, quoteRule(d), lift))
}

// hostOnly is r as an allow command names it: the host, with the port
// when it is not 80 or 443.
func hostOnly(r request) string {
	if r.port == 80 || r.port == 443 {
		return r.host
	}
	return r.target()
}

func quoteRule(r hostrule.Rule) string { return strconv.Quote(r.String()) + " (" + r.Source + ")" }
