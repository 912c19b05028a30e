package egress

import (
	"crypto/rand"
	"fmt"
	"slices"
	"strings"

	"github.com/sandtray/sandtray/engine/internal/egress/hostrule"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Secrets: a sandbox holds a placeholder for each secret in its
// environment; the gate swaps it for the real value only in requests to the
// hosts the secret is bound to, and refuses a request that carries it to
// any other host. For a bound host the gate terminates TLS (with the
// install's CA, ca.go) so it can see and change the request; every other
// host's TLS is tunnelled untouched.

// Secret is one [secrets.NAME] of the config, with its value.
type Secret struct {
	Name  string
	Hosts []string // patterns, as egress rules: host, *.domain, host:port
	Value string
	// Body lets the gate swap the placeholder in request bodies too (else
	// headers and the URL's query only).
	Body bool
	// Header, when set, is the one request header the gate swaps the
	// placeholder in; Query, the one query parameter. With neither, any
	// header and any query parameter.
	Header, Query string
}

// inHeader and inQuery report whether s is swapped in header k, and in
// query parameter name.
func (s *secret) inHeader(k string) bool {
	return s.Header == "" && s.Query == "" || strings.EqualFold(k, s.Header)
}

func (s *secret) inQuery(name string) bool {
	return s.Header == "" && s.Query == "" || s.Query != "" && name == s.Query
}

// secret is a Secret with its hosts parsed.
type secret struct {
	Secret
	hosts []hostrule.Rule
}

// binds reports whether s is bound to host:port (a host pattern without a
// port binds ports 80 and 443, as an allow rule; HostAlias without a port
// binds every port of egress.host_ports, the only ones it reaches: F66).
func (s *secret) binds(host string, port int) bool {
	return slices.ContainsFunc(s.hosts, func(r hostrule.Rule) bool { return bindsBy(r, host, port) })
}

func bindsBy(r hostrule.Rule, host string, port int) bool {
	return r.Allows(host, port) || host == HostAlias && r.Host == HostAlias && !r.Wildcard && r.Port == 0
}

// bindsPlain reports whether s may go to host:port over plain HTTP: only
// where a binding names the port, or the host is the host's own loopback
// (HostAlias); a binding by name alone means HTTPS (F43).
func (s *secret) bindsPlain(host string, port int) bool {
	return slices.ContainsFunc(s.hosts, func(r hostrule.Rule) bool { return bindsBy(r, host, port) && (r.Port != 0 || host == HostAlias) })
}

// placeholder is one secret's placeholder in one sandbox.
type placeholder struct {
	text string
	s    *secret
}

// placeholderAlphabet is what a placeholder is made of after its prefix:
// safe in a URL, a header and JSON unescaped.
const placeholderAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// minPlaceholder is the shortest placeholder: its random part alone makes
// a clash with other text impossible in practice.
const minPlaceholder = 32

// NewPlaceholder returns a random placeholder for a secret whose value has
// n bytes: as long as the value (at least 32), so what counts lengths
// sees none change.
func NewPlaceholder(n int) string {
	n = max(n, minPlaceholder)
	const prefix = "sandtray_ph_"
	b := make([]byte, n-len(prefix))
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail
	}
	for i := range b {
		b[i] = placeholderAlphabet[int(b[i])%len(placeholderAlphabet)]
	}
	return prefix + string(b)
}

// MinValue is the shortest value a secret may have: the gate finds what
// would show a value in an answer by runs of this many of its bytes, and
// anything shorter would match ordinary text.
const MinValue = keyLen

// parseSecrets reads the options' secrets, naming the bad one.
func parseSecrets(in []Secret) ([]*secret, error) {
	out := make([]*secret, 0, len(in))
	for _, s := range in {
		if len(s.Value) < MinValue {
			return nil, fmt.Errorf("secrets.%s: its value has %d bytes; a secret needs at least %d, so the gate can tell it from other text: %w", s.Name, len(s.Value), MinValue, sandbox.ErrInvalid)
		}
		rules, err := hostrule.ParseList("secrets."+s.Name+".hosts", s.Hosts, hostrule.SourceConfig)
		if err != nil {
			return nil, err
		}
		out = append(out, &secret{Secret: s, hosts: rules})
	}
	return out, nil
}

// placeholdersOf pairs a sandbox's placeholders (secret name → text) with
// the gate's secrets; a name the gate has no value for is left out, as is a
// placeholder too short to be one of the gate's.
func placeholdersOf(secrets []*secret, ph map[string]string) []placeholder {
	var out []placeholder
	for _, s := range secrets {
		if t := ph[s.Name]; len(t) >= minPlaceholder && s.Value != "" {
			out = append(out, placeholder{text: t, s: s})
		}
	}
	return out
}

// plainVerdict is the refusal of a secret's placeholder sent in clear to
// a host the secret goes to over HTTPS only.
func plainVerdict(r request, s *secret) verdict {
	return verdict{rule: "secret " + s.Name + " over HTTPS only", status: 403,
		body: fmt.Sprintf("sandtray egress: %s is refused: secret %s goes to %s over HTTPS only, never in clear; use https:// (or the user binds host:port in [secrets.%s] to allow plain HTTP there)",
			r.target(), s.Name, r.host, s.Name)}
}

// violationVerdict is the refusal of a placeholder sent to a host its
// secret is not bound to.
func violationVerdict(r request, s *secret) verdict {
	return verdict{rule: "secret " + s.Name + " not bound", status: 403,
		body: fmt.Sprintf("sandtray egress: %s is refused: it carries the placeholder of secret %s, which is bound to %s only; the gate puts a secret only into requests to its own hosts (the user binds hosts in [secrets.%s] of config.toml or in the Sandtray app's Settings)",
			r.target(), s.Name, strings.Join(s.Hosts, ", "), s.Name)}
}
