// Package hostrule is the egress gate's host patterns, as the config, the
// approvals and the gate read them: a host name, every name under a domain,
// every name, or an IP literal, each with an optional port. It needs only
// the standard library, so the config can check its [egress] and
// [secrets.*] hosts without linking the gate.
package hostrule

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Rule is one pattern of an allow or deny list: a host name ("pypi.org"),
// every name under a domain ("*.debian.org", not the domain itself), every
// name ("*"), or an IP literal ("1.2.3.4", "[fd00::1]"), each optionally
// with a port ("example.com:8080"). A rule without a port matches ports 80
// and 443 when it allows, and every port when it denies.
type Rule struct {
	// Host is the lower-cased name without a trailing dot; for a wildcard,
	// the domain after "*." ("" for "*"); for an IP literal, its text.
	Host     string
	Wildcard bool
	IP       netip.Addr // set for an IP literal
	Port     int        // 0: none named
	// Source says where the rule came from (see the Source constants); a
	// rule of the defaults is never explicit (see Explicit).
	Source string
}

// Where rules come from, as records and listings name them.
const (
	SourceDefault = "default"    // the built-in package indexes
	SourceConfig  = "config"     // [egress] in config.toml
	SourceGlobal  = "global"     // an approval for every sandbox ("always")
	SourceSandbox = "sandbox"    // an approval for one sandbox
	SourceInstall = "install"    // install_packages, for that call only
	SourceOnce    = "once"       // an approval of one pending request
	SourceHost    = "host_ports" // egress.host_ports, for host.sandtray.internal
)

// Parse reads one pattern; source is kept on the rule. A pattern that
// is not a host, a wildcard domain or an IP literal, with an optional port
// of 1 to 65535, is an error wrapping sandbox.ErrInvalid.
func Parse(pattern, source string) (Rule, error) {
	p := strings.TrimSpace(pattern)
	bad := func(why string) (Rule, error) {
		return Rule{}, fmt.Errorf("egress rule %s %s: use a host (pypi.org), *.domain, an IP literal, each optionally with :port: %w", quoteShort(pattern), why, sandbox.ErrInvalid)
	}
	if p == "" {
		return bad("is empty")
	}
	host, port := p, 0
	if h, ps, err := net.SplitHostPort(p); err == nil {
		n, err := Port(ps)
		if err != nil {
			return bad("has a bad port")
		}
		host, port = h, n
	}
	r := Rule{Port: port, Source: source}
	switch {
	case host == "*":
		r.Wildcard = true
		return r, nil
	case strings.HasPrefix(host, "*."):
		r.Wildcard, host = true, host[2:]
	}
	name, err := Host(host)
	if err != nil || r.Wildcard && IsIPLiteral(name) {
		return bad("is not a host name")
	}
	r.Host = name
	if !r.Wildcard && IsIPLiteral(name) {
		r.IP = netip.MustParseAddr(name)
	}
	return r, nil
}

// validName reports whether h is a DNS name: labels of letters, digits, '-'
// and '_', none empty, at most 253 characters.
func validName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// String is the rule as written in a config or on the command line.
func (r Rule) String() string {
	h := r.Host
	switch {
	case r.Wildcard && h == "":
		h = "*"
	case r.Wildcard:
		h = "*." + h
	case r.IP.Is6():
		if r.Port != 0 {
			return "[" + h + "]:" + strconv.Itoa(r.Port)
		}
		return h
	}
	if r.Port != 0 {
		return h + ":" + strconv.Itoa(r.Port)
	}
	return h
}

// Explicit reports whether the rule lets a connection reach a loopback,
// private or otherwise special address: a host named exactly (no wildcard)
// in the user's config, or an IP literal the user allowed (config or
// approval). An approval of a name is not: a name the user allowed when
// asked may resolve to their LAN (DNS rebinding).
func (r Rule) Explicit() bool {
	switch {
	case r.Wildcard:
		return false
	case r.IP.IsValid():
		return r.Source == SourceConfig || r.Source == SourceSandbox || r.Source == SourceGlobal
	}
	return r.Source == SourceConfig
}

// MatchesHost reports whether the rule's host part covers host (a
// normalised name or IP literal text).
func (r Rule) MatchesHost(host string) bool {
	switch {
	case r.IP.IsValid():
		ip, err := netip.ParseAddr(host)
		return err == nil && ip.Unmap() == r.IP
	case r.Wildcard && r.Host == "":
		_, err := netip.ParseAddr(host)
		return err != nil // "*" is every name, never an IP literal
	case r.Wildcard:
		return strings.HasSuffix(host, "."+r.Host)
	}
	return host == r.Host
}

// Allows reports whether an allow rule covers host:port: its host, and its
// port, or 80 and 443 when it names none.
func (r Rule) Allows(host string, port int) bool {
	if !r.MatchesHost(host) {
		return false
	}
	if r.Port != 0 {
		return r.Port == port
	}
	return port == 80 || port == 443
}

// Denies reports whether a deny rule covers host:port: its host, and its
// port, or every port when it names none.
func (r Rule) Denies(host string, port int) bool {
	return r.MatchesHost(host) && (r.Port == 0 || r.Port == port)
}

// ParseList reads a list of patterns, naming the key in its error.
func ParseList(key string, patterns []string, source string) ([]Rule, error) {
	out := make([]Rule, 0, len(patterns))
	for i, p := range patterns {
		r, err := Parse(p, source)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", key, i, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// maxName is the longest DNS name (RFC 1035), without its trailing dot.
const maxName = 253

// Host is a request's host as every rule compares it, or an error wrapping
// sandbox.ErrInvalid that says why it is none: the one place the gate reads
// a name a sandbox wrote. A name is lower-cased and loses one trailing dot
// ("Evil.Test." is evil.test); it must then be a DNS name of at most 253
// bytes whose labels are not empty ("evil.test.." is refused, not
// shortened) and whose last label is not a number ("2130706433", "0x7f.1":
// IPv4 in forms only some resolvers read). An IP literal may be in
// brackets; an IPv4-mapped IPv6 one is its IPv4; one with a zone is refused.
func Host(h string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("%s %s: %w", quoteShort(h), why, sandbox.ErrInvalid)
	}
	if len(h) > maxName+3 { // room for brackets or a trailing dot; checked again below
		return bad(fmt.Sprintf("is not a host name: it is %d bytes long, and a name has at most %d", len(h), maxName))
	}
	lit := h
	if strings.HasPrefix(lit, "[") && strings.HasSuffix(lit, "]") {
		lit = lit[1 : len(lit)-1]
	}
	if ip, err := netip.ParseAddr(lit); err == nil {
		if ip.Zone() != "" {
			return bad("is not a host name: an IP address with a zone reaches nothing outside this machine")
		}
		return ip.Unmap().String(), nil
	}
	name := strings.ToLower(strings.TrimSuffix(h, "."))
	if len(name) > maxName {
		return bad(fmt.Sprintf("is not a host name: it is %d bytes long, and a name has at most %d", len(name), maxName))
	}
	if !validName(name) {
		return bad("is not a host name: use letters, digits, '-' and '_' in labels joined by single dots (a name in another script in its ASCII form, xn--…)")
	}
	if numeric(name[strings.LastIndexByte(name, '.')+1:]) {
		return bad("is not a host name: it ends in a number; write an IP address as four numbers joined by dots (1.2.3.4), or in brackets for IPv6")
	}
	return name, nil
}

// numeric reports whether a label is a number (decimal, or hex with 0x),
// which no top-level domain is.
func numeric(label string) bool {
	if rest, ok := strings.CutPrefix(label, "0x"); ok {
		label = rest
		return label == "" || strings.Trim(label, "0123456789abcdef") == ""
	}
	return label != "" && strings.Trim(label, "0123456789") == ""
}

// Target reads a request's "host:port" (a CONNECT target, a URL's host),
// with def as the port when it names none, through Host; a port that is not
// a number from 1 to 65535 (as written: digits only) is an error wrapping
// sandbox.ErrInvalid.
func Target(s string, def int) (host string, port int, err error) {
	h, ps, err := net.SplitHostPort(s)
	if err != nil {
		if strings.HasPrefix(s, "[") && !strings.HasSuffix(s, "]") || strings.Count(s, ":") == 1 {
			return "", 0, fmt.Errorf("%s is not host:port: %w", quoteShort(s), sandbox.ErrInvalid)
		}
		h, port = s, def // no port, or an IPv6 literal without brackets
	} else if port, err = Port(ps); err != nil {
		return "", 0, err
	}
	host, err = Host(h)
	return host, port, err
}

// Port reads a port as written: digits only, from 1 to 65535.
func Port(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || strings.Trim(s, "0123456789") != "" || n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %s is not a port: use one from 1 to 65535: %w", quoteShort(s), sandbox.ErrInvalid)
	}
	return n, nil
}

// quoteShort is s quoted for an error, cut to its first 64 bytes: what a
// sandbox wrote is never copied into a message whole.
func quoteShort(s string) string {
	if len(s) > 64 {
		return strconv.Quote(strings.ToValidUTF8(s[:64], "")) + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return strconv.Quote(s)
}

// IsIPLiteral reports whether host (normalised) is an IP address.
func IsIPLiteral(host string) bool {
	_, err := netip.ParseAddr(host)
	return err == nil
}
