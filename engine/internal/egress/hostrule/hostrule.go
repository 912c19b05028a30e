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
	p := strings.ToLower(strings.TrimSpace(pattern))
	bad := func(why string) (Rule, error) {
		return Rule{}, fmt.Errorf("egress rule %q %s: use a host (pypi.org), *.domain, an IP literal, each optionally with :port: %w", pattern, why, sandbox.ErrInvalid)
	}
	if p == "" {
		return bad("is empty")
	}
	host, port := p, 0
	if h, ps, err := net.SplitHostPort(p); err == nil {
		n, perr := strconv.Atoi(ps)
		if perr != nil || n < 1 || n > 65535 {
			return bad("has a bad port")
		}
		host, port = h, n
	} else if strings.HasPrefix(p, "[") && strings.HasSuffix(p, "]") {
		host = p[1 : len(p)-1]
	}
	r := Rule{Port: port, Source: source}
	if ip, err := netip.ParseAddr(host); err == nil {
		r.IP, r.Host = ip.Unmap(), ip.Unmap().String()
		return r, nil
	}
	if host == "*." {
		return bad("is not a host name")
	}
	host = strings.TrimSuffix(host, ".")
	switch {
	case host == "*":
		r.Wildcard = true
		return r, nil
	case strings.HasPrefix(host, "*."):
		r.Wildcard, host = true, host[2:]
	}
	if !validName(host) {
		return bad("is not a host name")
	}
	r.Host = host
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

// Normal is a request's host as rules compare it: lower case, no
// trailing dot, an IPv6 literal without brackets, an IPv4-mapped one as
// IPv4.
func Normal(h string) string {
	h = strings.ToLower(strings.TrimSuffix(strings.Trim(h, "[]"), "."))
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip.Unmap().String()
	}
	return h
}

// IsIPLiteral reports whether host (normalised) is an IP address.
func IsIPLiteral(host string) bool {
	_, err := netip.ParseAddr(host)
	return err == nil
}
