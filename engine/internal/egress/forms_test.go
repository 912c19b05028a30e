package egress

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// oddValue is a value with what URL, JSON and HTML encodings change.
const oddValue = `sk-Odd+Key/0123456789abcdef"&<>=xyz~0123`

// formsOf are the ways a careless API might echo v.
func formsOf(v string) map[string]string {
	return map[string]string{
		"as is": v, "upper case": strings.ToUpper(v), "lower case": strings.ToLower(v),
		"query-escaped": url.QueryEscape(v), "path-escaped": url.PathEscape(v), "every byte %XX": percentAll([]byte(v)),
		"JSON":          func() string { b, _ := json.Marshal(v); return string(b) }(),
		"JSON with \\/": func() string { b, _ := json.Marshal(v); return strings.ReplaceAll(string(b), "/", `\/`) }(),
		"HTML":          html.EscapeString(v), "hex": hex.EncodeToString([]byte(v)), "HEX": strings.ToUpper(hex.EncodeToString([]byte(v))),
		"base64":         base64.StdEncoding.EncodeToString([]byte(v)),
		"base64 inside":  base64.StdEncoding.EncodeToString([]byte("x" + v + "yz")),
		"base64 inside2": base64.URLEncoding.EncodeToString([]byte("xy" + v)),
		"a prefix":       v[:12], "a part": v[9:27], "the end": v[len(v)-10:],
	}
}

// leaks lists the forms of v, and the runs of 8 bytes of it (any case),
// that text shows.
func leaks(text, v string) []string {
	var out []string
	for name, f := range formsOf(v) {
		if strings.Contains(text, f) {
			out = append(out, name)
		}
	}
	low := strings.ToLower(text)
	for i := 0; i+8 <= len(v); i++ {
		if strings.Contains(low, strings.ToLower(v[i:i+8])) {
			out = append(out, fmt.Sprintf("bytes %d to %d", i, i+8))
		}
	}
	return out
}

// F65: a bound host that echoes the value it got, in every form a careless
// API might, shows the sandbox none of it: not in the body, not in a
// header.
func TestEchoedValueIsScrubbedInEveryForm(t *testing.T) {
	cert := leafFor(t, upstreamCA(t), "api.test")
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		w.Header().Set("X-Echo", strings.ToUpper(got))
		w.Header().Set("X-Echo-B64", base64.StdEncoding.EncodeToString([]byte(got)))
		for name, f := range formsOf(got) {
			fmt.Fprintf(w, "%s: %s\n", name, f)
		}
	}))
	s.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	s.StartTLS()
	t.Cleanup(s.Close)
	port := s.Listener.Addr().(*net.TCPAddr).Port
	for _, value := range []string{oddValue, testValue} {
		tg, ca, ph := secretGateValue(t, port, value)
		req, _ := http.NewRequest("GET", fmt.Sprintf("https://api.test:%d/", port), nil)
		req.Header.Set("Authorization", "Bearer "+ph)
		resp, body := get(t, trusting(tg, ca), req)
		var head strings.Builder
		resp.Header.Write(&head)
		if l := leaks(body+head.String(), value); resp.StatusCode != 200 || len(l) > 0 {
			t.Errorf("value %q: the sandbox saw it %v in:\n%s%s", value, l, head.String(), body)
		}
		if !strings.Contains(body, "as is: "+ph) {
			t.Errorf("value %q: the echo of the value is not the placeholder:\n%s", value, body)
		}
	}
}

// secretGateValue is secretGate with API_KEY's value value, bound to
// api.test:port, with its Header and Query.
func secretGateValue(t *testing.T, port int, value string, placement ...string) (*testGate, *CA, string) {
	t.Helper()
	ca, err := LoadOrCreateCA(t.TempDir(), []string{"api.test"})
	if err != nil {
		t.Fatal(err)
	}
	upRoots := x509Pool(upstreamCA(t))
	sec := Secret{Name: "API_KEY", Hosts: []string{fmt.Sprintf("api.test:%d", port)}, Value: value, Body: true}
	if len(placement) == 2 {
		sec.Header, sec.Query = placement[0], placement[1]
	}
	tg := newTestGate(t, Options{Allow: []string{fmt.Sprintf("api.test:%d", port)}, Secrets: []Secret{sec}, CA: ca, UpstreamRoots: upRoots},
		map[string][]string{"api.test": {"127.0.0.1"}})
	ph := NewPlaceholder(len(value))
	if err := tg.Register(Sandbox{ID: "box1", Name: "sb", Placeholders: map[string]string{"API_KEY": ph}}); err != nil {
		t.Fatal(err)
	}
	return tg, ca, ph
}

// F65: the value goes where the secret's config says (a header, a query
// parameter; any of them when it says neither), encoded as it must be
// there: the server reads back exactly the value.
func TestValueGoesWhereItsConfigSaysEncoded(t *testing.T) {
	cert := leafFor(t, upstreamCA(t), "api.test")
	got := make(chan map[string]string, 1)
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Key string }
		json.NewDecoder(r.Body).Decode(&body)
		got <- map[string]string{"Authorization": r.Header.Get("Authorization"), "X-Other": r.Header.Get("X-Other"),
			"api_key": r.URL.Query().Get("api_key"), "other": r.URL.Query().Get("other"), "body": body.Key}
	}))
	s.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	s.StartTLS()
	t.Cleanup(s.Close)
	port := s.Listener.Addr().(*net.TCPAddr).Port
	v := oddValue
	for _, c := range []struct {
		header, query string
		want          func(ph string) map[string]string
	}{
		{"", "", func(ph string) map[string]string {
			return map[string]string{"Authorization": "Bearer " + v, "X-Other": v, "api_key": v, "other": v, "body": v}
		}},
		{"Authorization", "", func(ph string) map[string]string {
			return map[string]string{"Authorization": "Bearer " + v, "X-Other": ph, "api_key": ph, "other": ph, "body": v}
		}},
		{"", "api_key", func(ph string) map[string]string {
			return map[string]string{"Authorization": "Bearer " + ph, "X-Other": ph, "api_key": v, "other": ph, "body": v}
		}},
		{"x-other", "api_key", func(ph string) map[string]string {
			return map[string]string{"Authorization": "Bearer " + ph, "X-Other": v, "api_key": v, "other": ph, "body": v}
		}},
	} {
		tg, ca, ph := secretGateValue(t, port, v, c.header, c.query)
		req, _ := http.NewRequest("POST", fmt.Sprintf("https://api.test:%d/?api_key=%s&other=%s", port, ph, ph), strings.NewReader(`{"key":"`+ph+`"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+ph)
		req.Header.Set("X-Other", ph)
		if resp, body := get(t, trusting(tg, ca), req); resp.StatusCode != 200 {
			t.Fatalf("header %q query %q: %d %q", c.header, c.query, resp.StatusCode, body)
		}
		g, want := <-got, c.want(ph)
		for k, w := range want {
			if g[k] != w {
				t.Errorf("header %q query %q: the server read %s %q, want %q", c.header, c.query, k, g[k], w)
			}
		}
	}
}

// x509Pool is a pool of ca's certificate.
func x509Pool(ca *CA) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert.Leaf)
	return p
}
