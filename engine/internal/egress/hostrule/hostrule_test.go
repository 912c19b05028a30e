package hostrule

import (
	"errors"
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
	for _, bad := range []string{"", "exa mple.com", "example.com:0", "example.com:70000", "http://example.com", "*.", "-a.com", "a..com", "ex/ample.com"} {
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
