package egress

import (
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// What the gate does with a request's placeholders: refuse it when one is
// on its way to a host its secret is not bound to (or in clear where the
// secret goes over HTTPS only), and swap the others for their values where
// the secret's config says (secret.inHeader, inQuery, Body), each encoded as
// where it goes wants it (F65: a value went into the query unescaped).

// swap is one replacement of old by new, for secret name.
type swap struct{ old, new, name string }

// secretPlan is what the gate does with one request's secrets.
type secretPlan struct {
	put       []placeholder // the secrets bound to the host, to swap in
	violation *secret       // a placeholder sent to a host its secret is not bound to
	plain     *secret       // a placeholder sent in clear to a host its secret is bound to over HTTPS only
	used      *usedSet      // the names swapped
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
		p.put = append(p.put, ph)
	}
	return p
}

// apply swaps the plan's placeholders for their values in req: in the
// headers and query parameters each secret's config names (or any, when it
// names none), and, for a secret with Body, in the body. It notes which
// secrets it used. The request asks for an uncompressed answer, so what the
// host echoes of a value can be scrubbed (scrub.go).
func (p *secretPlan) apply(req *http.Request, b *budget) error {
	if len(p.put) == 0 {
		return nil
	}
	var body []swap
	for _, ph := range p.put {
		s := ph.s
		for k, vs := range req.Header {
			if !s.inHeader(k) {
				continue
			}
			for i, v := range vs {
				if strings.Contains(v, ph.text) {
					vs[i] = strings.ReplaceAll(v, ph.text, s.Value)
					p.used.add(s.Name)
				}
			}
		}
		if swapQuery(req.URL, ph.text, s.Value, s.inQuery) {
			p.used.add(s.Name)
		}
		if s.Body {
			body = append(body, swap{ph.text, bodyValue(req.Header.Get("Content-Type"), s.Value), s.Name})
		}
	}
	if len(body) > 0 && req.Body != nil && req.Body != http.NoBody {
		if err := swapBody(req, body, b, p.used); err != nil {
			return err
		}
	}
	req.Header.Del("Accept-Encoding")
	// No compressed WebSocket frames either: they would carry an echoed
	// value past the scrub.
	req.Header.Del("Sec-WebSocket-Extensions")
	return nil
}

// swapQuery puts value in place of ph in the query parameters of u that
// in allows, decoded first and encoded again (a '+' in a value is not a
// space), leaving the others as they were written. It reports whether it
// swapped any.
func swapQuery(u *url.URL, ph, value string, in func(name string) bool) bool {
	if !strings.Contains(u.RawQuery, ph) && !strings.Contains(u.RawQuery, "%") {
		return false
	}
	parts := strings.Split(u.RawQuery, "&")
	swapped := false
	for i, part := range parts {
		k, v, _ := strings.Cut(part, "=")
		name, err := url.QueryUnescape(k)
		if err != nil || !in(name) {
			continue
		}
		val, err := url.QueryUnescape(v)
		if err != nil || !strings.Contains(val, ph) {
			continue
		}
		parts[i] = k + "=" + url.QueryEscape(strings.ReplaceAll(val, ph, value))
		swapped = true
	}
	if swapped {
		u.RawQuery = strings.Join(parts, "&")
	}
	return swapped
}

// bodyValue is value as a body of Content-Type ctype carries it: escaped
// inside a JSON string, URL-encoded in a form, as it is otherwise.
func bodyValue(ctype, value string) string {
	mt, _, _ := mime.ParseMediaType(ctype)
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		b, _ := json.Marshal(value)
		return string(b[1 : len(b)-1])
	case mt == "application/x-www-form-urlencoded":
		return url.QueryEscape(value)
	}
	return value
}
