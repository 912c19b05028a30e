package egress

import (
	"crypto/rand"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

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

// swap is one replacement of old by new, for secret name.
type swap struct{ old, new, name string }

// secretPlan is what the gate does with one request's secrets.
type secretPlan struct {
	swaps     []swap   // placeholder → value, for the secrets bound to the host
	body      []swap   // the same, for those with Body
	scrub     []swap   // value → placeholder, in what the host answers
	violation *secret  // a placeholder sent to a host its secret is not bound to
	plain     *secret  // a placeholder sent in clear to a host its secret is bound to over HTTPS only
	used      *usedSet // the names swapped
}

// bound reports whether any of a sandbox's secrets is bound to host:port:
// the gate then terminates its TLS.
func bound(phs []placeholder, host string, port int) bool {
	return slices.ContainsFunc(phs, func(p placeholder) bool { return p.s.binds(host, port) })
}

// unboundIn is the first secret of phs whose placeholder is in one of
// texts while it is not bound to host:port.
func unboundIn(phs []placeholder, host string, port int, texts ...string) *secret {
	for _, p := range phs {
		if p.s.binds(host, port) {
			continue
		}
		for _, t := range texts {
			if strings.Contains(t, p.text) {
				return p.s
			}
		}
	}
	return nil
}

// planFor looks at a request to host:port: a placeholder of a secret not
// bound to it anywhere in its URL or headers is a violation; the secrets
// bound to it are swapped.
func planFor(phs []placeholder, host string, port int, req *http.Request) secretPlan {
	p := secretPlan{used: &usedSet{}}
	texts := []string{req.URL.String(), req.Host}
	for k, vs := range req.Header {
		texts = append(texts, k)
		texts = append(texts, vs...)
	}
	if s := unboundIn(phs, host, port, texts...); s != nil {
		p.violation = s
		return p
	}
	clear := req.URL.Scheme != "https"
	for _, ph := range phs {
		if !ph.s.binds(host, port) {
			continue
		}
		if clear && !ph.s.bindsPlain(host, port) {
			if slices.ContainsFunc(texts, func(t string) bool { return strings.Contains(t, ph.text) }) {
				p.plain = ph.s
				return p
			}
			continue
		}
		p.swaps = append(p.swaps, swap{ph.text, ph.s.Value, ph.s.Name})
		p.scrub = append(p.scrub, swap{ph.s.Value, ph.text, ph.s.Name})
		if ph.s.Body {
			p.body = append(p.body, swap{ph.text, ph.s.Value, ph.s.Name})
		}
	}
	return p
}

// apply swaps the plan's placeholders in req's headers, its URL's query
// and, for secrets with Body, its body, and notes which secrets it used.
// The request asks for an uncompressed answer, so what the host echoes of a
// value can be scrubbed (scrubResponse).
func (p *secretPlan) apply(req *http.Request, b *budget) error {
	if len(p.swaps) == 0 {
		return nil
	}
	note := func(s string) {
		for _, sw := range p.swaps {
			if strings.Contains(s, sw.old) {
				p.used.add(sw.name)
			}
		}
	}
	for k, vs := range req.Header {
		for i, v := range vs {
			note(v)
			vs[i] = replaceAll(v, p.swaps)
		}
		req.Header[k] = vs
	}
	if q := req.URL.RawQuery; q != "" {
		note(q)
		req.URL.RawQuery = replaceAll(q, p.swaps)
	}
	if len(p.body) > 0 && req.Body != nil && req.Body != http.NoBody {
		if err := swapBody(req, p.body, b, p.used); err != nil {
			return err
		}
	}
	req.Header.Del("Accept-Encoding")
	// No compressed WebSocket frames either: they would carry an echoed
	// value past the scrub.
	req.Header.Del("Sec-WebSocket-Extensions")
	return nil
}

// swapMatcher finds each swap's old, to put its new in its place.
func swapMatcher(swaps []swap) *matcher {
	m := &matcher{}
	for i, sw := range swaps {
		m.add(&pattern{text: []byte(sw.old), repl: []byte(sw.new), swap: i})
	}
	return m
}

func replaceAll(s string, swaps []swap) string {
	for _, sw := range swaps {
		s = strings.ReplaceAll(s, sw.old, sw.new)
	}
	return s
}

// scrubResponse puts the placeholders back wherever a bound host's answer
// echoes a value: its headers and its body.
func scrubResponse(resp *http.Response, scrub []swap) {
	if len(scrub) == 0 {
		return
	}
	for k, vs := range resp.Header {
		for i, v := range vs {
			vs[i] = replaceAll(v, scrub)
		}
		resp.Header[k] = vs
	}
	if resp.Body == nil || resp.Body == http.NoBody {
		return
	}
	if !sameLengths(scrub) {
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
	}
	resp.Body = newReplacer(resp.Body, swapMatcher(scrub), nil)
}

// scrubText puts the placeholders back in text (an error to be shown or
// recorded).
func scrubText(s string, scrub []swap) string { return replaceAll(s, scrub) }

// upgraded is the body of a bound host's 101 answer (a WebSocket): what
// the host sends has values put back to placeholders (the swaps are as
// long as the values, so frame lengths hold), what the sandbox sends goes
// as it is.
type upgraded struct {
	io.Reader
	rw io.ReadWriteCloser
}

func (u *upgraded) Write(p []byte) (int, error) { return u.rw.Write(p) }
func (u *upgraded) Close() error                { return u.rw.Close() }

// sameLengths reports whether each swap's new is as long as its old.
func sameLengths(swaps []swap) bool {
	for _, s := range swaps {
		if len(s.old) != len(s.new) {
			return false
		}
	}
	return true
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

// certCache keeps the certificates the gate made for bound hosts.
type certCache struct {
	mu    sync.Mutex
	certs map[string]*tls.Certificate
}

func newCertCache() *certCache { return &certCache{certs: map[string]*tls.Certificate{}} }

func (c *certCache) Fetch(host string, gen func() (*tls.Certificate, error)) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cert := c.certs[host]; cert != nil {
		return cert, nil
	}
	cert, err := gen()
	if err != nil {
		return nil, err
	}
	if len(c.certs) > 1000 {
		clear(c.certs)
	}
	c.certs[host] = cert
	return cert, nil
}
