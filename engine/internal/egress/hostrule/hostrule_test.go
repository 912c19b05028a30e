package hostrule

import (
	"errors"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestRuleMatching(t *testing.T) {
	cases := []struct {
		pattern string
		host    string
		port    int
		allows  bool
		denies  bool
	}{
		{"pypi.org", "pypi.org", 443, true, true},
		{"pypi.org", "pypi.org", 80, true, true},
		{"pypi.org", "pypi.org", 8080, false, true}, // allow: 80 and 443 only; deny: every port
		{"pypi.org", "files.pypi.org", 443, false, false},
		{"pypi.org", "evilpypi.org", 443, false, false},
		{"PyPI.org.", "pypi.org", 443, true, true},
		{"*.debian.org", "deb.debian.org", 80, true, true},
		{"*.debian.org", "a.b.debian.org", 80, true, true},
		{"*.debian.org", "debian.org", 80, false, false},
		{"*.debian.org", "xdebian.org", 80, false, false},
		{"example.com:8080", "example.com", 8080, true, true},
		{"example.com:8080", "example.com", 443, false, false},
		{"*", "anything.example", 443, true, true},
		{"*", "1.1.1.1", 443, false, false}, // a wildcard never names an IP literal
		{"1.1.1.1", "1.1.1.1", 80, true, true},
		{"1.1.1.1", "1.1.1.2", 80, false, false},
		{"[::1]:8080", "::1", 8080, true, true},
		{"::1", "::1", 443, true, true},
		{"10.0.0.5:5432", "10.0.0.5", 5432, true, true},
	}
	for _, c := range cases {
		r, err := Parse(c.pattern, SourceConfig)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.pattern, err)
		}
		if got := r.Allows(c.host, c.port); got != c.allows {
			t.Errorf("allow %q on %s:%d = %v, want %v", c.pattern, c.host, c.port, got, c.allows)
		}
		if got := r.Denies(c.host, c.port); got != c.denies {
			t.Errorf("deny %q on %s:%d = %v, want %v", c.pattern, c.host, c.port, got, c.denies)
		}
	}
}

func TestRuleParsing(t *testing.T) {
	for _, bad := range []string{"", "exa mple.com", "example.com:0", "example.com:70000", "http://example.com", "*.", "-a.com", "a..com", "ex/ample.com", "a.com..", "10.0.0", "*.1.2.3.4", "fe80::1%eth0", "a.com:+80"} {
		if _, err := Parse(bad, SourceConfig); !errors.Is(err, sandbox.ErrInvalid) {
			t.Errorf("Parse(%q) = %v, want ErrInvalid", bad, err)
		}
	}
	for in, want := range map[string]string{
		"Example.COM": "example.com", "*.Debian.org": "*.debian.org", "*": "*", "a.com:8080": "a.com:8080",
		"[::1]:80": "[::1]:80", "::ffff:1.2.3.4": "1.2.3.4", "[fd00::1]": "fd00::1",
	} {
		r, err := Parse(in, SourceConfig)
		if err != nil || r.String() != want {
			t.Errorf("Parse(%q).String() = %q, %v; want %q", in, r.String(), err, want)
		}
	}
}

func TestRuleExplicit(t *testing.T) {
	for _, c := range []struct {
		pattern, source string
		want            bool
	}{
		{"db.internal", SourceConfig, true},
		{"db.internal", SourceSandbox, false},
		{"db.internal", SourceGlobal, false},
		{"10.0.0.5:5432", SourceSandbox, true},
		{"10.0.0.5", SourceGlobal, true},
		{"deb.debian.org", SourceDefault, false},
		{"deb.debian.org", SourceInstall, false},
		{"*.internal", SourceConfig, false},
	} {
		r, _ := Parse(c.pattern, c.source)
		if r.Explicit() != c.want {
			t.Errorf("%q from %s: Explicit = %v, want %v", c.pattern, c.source, !c.want, c.want)
		}
	}
}

// TestHost: every way of writing a name comes out as the one name rules
// compare; what is no host name is refused, saying so.
func TestHost(t *testing.T) {
	for in, want := range map[string]string{
		"Evil.Test": "evil.test", "evil.test.": "evil.test", "EVIL.TEST.": "evil.test", "[::ffff:1.2.3.4]": "1.2.3.4",
		"[FD00::1]": "fd00::1", "fd00::1": "fd00::1", "1.2.3.4": "1.2.3.4", "host.sandtray.internal": "host.sandtray.internal",
		"a-b_c.example": "a-b_c.example", "10.example": "10.example", "xn--bcher-kva.example": "xn--bcher-kva.example",
	} {
		if got, err := Host(in); err != nil || got != want {
			t.Errorf("Host(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	long := strings.Repeat("a", 60) + "." + strings.Repeat("b", 60) + "." + strings.Repeat("c", 60) + "." + strings.Repeat("d", 60) + "." + strings.Repeat("e", 60) + ".com"
	for in, why := range map[string]string{
		"evil.test..": "is not a host name", ".evil.test": "is not a host name", "": "is not a host name",
		"2130706433": "ends in a number", "0x7f.1": "ends in a number", "127.1": "ends in a number", "a.0x": "ends in a number",
		"fe80::1%eth0": "with a zone", "exa mple.com": "is not a host name", "bücher.example": "ASCII form",
		long:                         "it is 308 bytes long",
		strings.Repeat("a", 900_000): "it is 900000 bytes long",
	} {
		_, err := Host(in)
		if !errors.Is(err, sandbox.ErrInvalid) || !strings.Contains(err.Error(), why) || len(err.Error()) > 400 {
			t.Errorf("Host(%.70q) = %.300v; want ErrInvalid saying %q, in a few words", in, err, why)
		}
	}
}

func TestTarget(t *testing.T) {
	for _, c := range []struct {
		in, host string
		port     int
	}{
		{"Example.COM.:8443", "example.com", 8443}, {"example.com", "example.com", 443}, {"[::1]:80", "::1", 80},
		{"::1", "::1", 443}, {"1.2.3.4:65535", "1.2.3.4", 65535},
	} {
		if h, p, err := Target(c.in, 443); err != nil || h != c.host || p != c.port {
			t.Errorf("Target(%q) = %q %d %v; want %q %d", c.in, h, p, err, c.host, c.port)
		}
	}
	for in, why := range map[string]string{
		"ok.test:101387": "is not a port: use one from 1 to 65535", "ok.test:0": "is not a port", "ok.test:+443": "is not a port",
		"ok.test:": "is not a port", "ok.test:http": "is not a port", "evil.test..:443": "is not a host name", "[::1": "is not host:port",
	} {
		if _, _, err := Target(in, 443); !errors.Is(err, sandbox.ErrInvalid) || !strings.Contains(err.Error(), why) {
			t.Errorf("Target(%q) = %v; want ErrInvalid saying %q", in, err, why)
		}
	}
}
