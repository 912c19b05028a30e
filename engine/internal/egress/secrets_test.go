package egress

import (
	"compress/flate"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

const testValue = "sk-real-0123456789abcdef0123456789abcdef"

// leafFor is a server certificate for names signed by ca.
func leafFor(t testing.TB, ca *CA, names ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: names[0]},
		DNSNames: names, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert.Leaf, &key.PublicKey, ca.Cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// echoServer answers with what it got, and with the real value itself, as a
// careless API would.
func echoServer(t *testing.T, cert *tls.Certificate) (*httptest.Server, int) {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Echo-Auth", r.Header.Get("Authorization"))
		fmt.Fprintf(w, "auth=%s key=%s body=%s ae=%s", r.Header.Get("Authorization"), r.URL.Query().Get("key"), body, r.Header.Get("Accept-Encoding"))
	})
	s := httptest.NewUnstartedServer(h)
	if cert != nil {
		s.TLS = &tls.Config{Certificates: []tls.Certificate{*cert}}
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s, s.Listener.Addr().(*net.TCPAddr).Port
}

// secretGate is a gate with secret API_KEY bound to api.test:port (TLS,
// its certificate from upCA), both api.test and other.test allowed, and
// sandbox box1 holding placeholder ph.
func secretGate(t *testing.T, apiPort, otherPort int, body bool) (tg *testGate, ca *CA, ph string) {
	t.Helper()
	ca, err := LoadOrCreateCA(t.TempDir(), []string{"api.test", "other.test"})
	if err != nil {
		t.Fatal(err)
	}
	return secretGateWith(t, ca, apiPort, otherPort, body)
}

func secretGateWith(t *testing.T, ca *CA, apiPort, otherPort int, body bool) (*testGate, *CA, string) {
	upRoots := x509.NewCertPool()
	upRoots.AddCert(upstreamCA(t).Cert.Leaf)
	tg := newTestGate(t, Options{
		Allow:   []string{fmt.Sprintf("api.test:%d", apiPort), fmt.Sprintf("other.test:%d", otherPort)},
		Secrets: []Secret{{Name: "API_KEY", Hosts: []string{fmt.Sprintf("api.test:%d", apiPort)}, Value: testValue, Body: body}},
		CA:      ca, UpstreamRoots: upRoots,
	}, map[string][]string{"api.test": {"127.0.0.1"}, "other.test": {"127.0.0.1"}})
	ph := NewPlaceholder(len(testValue))
	if err := tg.Register(Sandbox{ID: "box1", Name: "sb", Placeholders: map[string]string{"API_KEY": ph}}); err != nil {
		t.Fatal(err)
	}
	return tg, ca, ph
}

var upCA *CA

// upstreamCA is the private CA of the test's upstream servers (as
// egress.trust_ca would name one).
func upstreamCA(t testing.TB) *CA {
	if upCA == nil {
		dir, err := os.MkdirTemp("", "upca")
		if err != nil {
			t.Fatal(err)
		}
		if upCA, err = LoadOrCreateCA(dir, []string{"*"}); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(dir)
	}
	return upCA
}

// trusting is tg's client trusting the gate's CA only, as a sandbox does.
func trusting(tg *testGate, ca *CA) *http.Client {
	c := tg.client()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.PEM)
	c.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: pool}
	return c
}

func get(t *testing.T, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func TestBoundHostGetsTheRealValueAndTheSandboxSeesOnlyThePlaceholder(t *testing.T) {
	cert := leafFor(t, upstreamCA(t), "api.test")
	_, apiPort := echoServer(t, &cert)
	tg, ca, ph := secretGate(t, apiPort, 1, false)
	req, _ := http.NewRequest("POST", fmt.Sprintf("https://api.test:%d/v1?key=%s", apiPort, ph), strings.NewReader("body "+ph))
	req.Header.Set("Authorization", "Bearer "+ph)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, body := get(t, trusting(tg, ca), req)
	// The server got the value in the header and the query, not in the
	// body (body = false); what it echoed back shows the placeholder.
	want := fmt.Sprintf("auth=Bearer %s key=%s body=body %s ae=gzip", ph, ph, ph)
	if resp.StatusCode != 200 || body != want {
		t.Fatalf("got %d %q, want %q", resp.StatusCode, body, want)
	}
	if got := resp.Header.Get("X-Echo-Auth"); got != "Bearer "+ph {
		t.Fatalf("echoed header %q", got)
	}
	rec := waitRecord(t, tg, "api.test")
	if rec.Decision != DecisionAllow || rec.Method != "POST" || len(rec.Secrets) != 1 || rec.Secrets[0] != "API_KEY" {
		t.Fatalf("record = %+v", rec)
	}
	b, _ := os.ReadFile(tg.dir + "/egress.jsonl")
	if strings.Contains(string(b), testValue) {
		t.Fatal("the record file holds the real value")
	}
}

func TestTheServerReallyGetsTheValue(t *testing.T) {
	cert := leafFor(t, upstreamCA(t), "api.test")
	got := make(chan string, 1)
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- r.Header.Get("Authorization") + "|" + r.URL.Query().Get("key") + "|" + string(body)
	}))
	s.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	s.StartTLS()
	t.Cleanup(s.Close)
	port := s.Listener.Addr().(*net.TCPAddr).Port
	tg, ca, ph := secretGate(t, port, 1, true)
	req, _ := http.NewRequest("POST", fmt.Sprintf("https://api.test:%d/?key=%s", port, ph), strings.NewReader(`{"k":"`+ph+`"}`))
	req.Header.Set("Authorization", "Bearer "+ph)
	get(t, trusting(tg, ca), req)
	want := "Bearer " + testValue + "|" + testValue + `|{"k":"` + testValue + `"}`
	if g := <-got; g != want {
		t.Fatalf("server got %q, want %q", g, want)
	}
}

func TestPlaceholderToAnotherHostIsRefusedAsAViolation(t *testing.T) {
	_, otherPort := echoServer(t, nil)
	tg, _, ph := secretGate(t, 1, otherPort, false)
	for _, tc := range []struct{ name, url, header string }{
		{"header", fmt.Sprintf("http://other.test:%d/", otherPort), "Bearer " + ph},
		{"query", fmt.Sprintf("http://other.test:%d/?q=%s", otherPort, ph), ""},
	} {
		req, _ := http.NewRequest("GET", tc.url, nil)
		if tc.header != "" {
			req.Header.Set("Authorization", tc.header)
		}
		resp, body := get(t, tg.client(), req)
		if resp.StatusCode != 403 || !strings.Contains(body, "secret API_KEY") || !strings.Contains(body, fmt.Sprintf("other.test:%d", otherPort)) {
			t.Fatalf("%s: got %d %q", tc.name, resp.StatusCode, body)
		}
	}
	rec := waitRecord(t, tg, "other.test")
	if rec.Decision != DecisionDeny || rec.Violation != "API_KEY" {
		t.Fatalf("record = %+v", rec)
	}
	// The same request without the placeholder goes through.
	resp, _ := get(t, tg.client(), mustReq(fmt.Sprintf("http://other.test:%d/", otherPort)))
	if resp.StatusCode != 200 {
		t.Fatalf("without the placeholder: %d", resp.StatusCode)
	}
}

func TestPlaceholderInAConnectTargetIsRefused(t *testing.T) {
	tg, _, ph := secretGate(t, 1, 443, false)
	resp, body := tg.raw(t, "CONNECT "+ph+".other.test:443 HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp.StatusCode != 403 || !strings.Contains(body, "secret API_KEY") {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	if n := tg.res.count(ph + ".other.test"); n != 0 {
		t.Fatalf("the gate looked the name up %d times", n)
	}
}

func TestUnboundHostIsTunnelledUntouched(t *testing.T) {
	// other.test's TLS is the server's own: the client sees its
	// certificate, not one of the gate's CA.
	cert := leafFor(t, upstreamCA(t), "other.test")
	_, otherPort := echoServer(t, &cert)
	tg, _, _ := secretGate(t, 1, otherPort, false)
	c := tg.client()
	pool := x509.NewCertPool()
	pool.AddCert(upstreamCA(t).Cert.Leaf)
	c.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: pool}
	resp, body := get(t, c, mustReq(fmt.Sprintf("https://other.test:%d/", otherPort)))
	if resp.StatusCode != 200 || !strings.HasPrefix(body, "auth=") {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	if resp.TLS == nil || resp.TLS.PeerCertificates[0].Issuer.CommonName != upstreamCA(t).Cert.Leaf.Subject.CommonName {
		t.Fatal("the tunnel was not the server's own TLS")
	}
}

func TestBoundHostWithAnUntrustedCertificateFails(t *testing.T) {
	// Signed by a CA neither the system nor egress.trust_ca has.
	other, err := LoadOrCreateCA(t.TempDir(), []string{"*"})
	if err != nil {
		t.Fatal(err)
	}
	cert := leafFor(t, other, "api.test")
	got := make(chan string, 1)
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.Header.Get("Authorization") }))
	s.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	s.StartTLS()
	t.Cleanup(s.Close)
	port := s.Listener.Addr().(*net.TCPAddr).Port
	tg, ca, ph := secretGate(t, port, 1, false)
	req, _ := http.NewRequest("GET", fmt.Sprintf("https://api.test:%d/", port), nil)
	req.Header.Set("Authorization", "Bearer "+ph)
	if resp, err := trusting(tg, ca).Do(req); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("a host with an untrusted certificate got the request")
		}
	}
	select {
	case a := <-got:
		t.Fatalf("server got %q", a)
	default:
	}
}

func TestCAIsKeptPrivateAndReused(t *testing.T) {
	dir := t.TempDir()
	a, err := LoadOrCreateCA(dir, []string{"api.test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{CACertFile, CAKeyFile} {
		st, err := os.Stat(dir + "/" + f)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", f, st.Mode(), err)
		}
	}
	b, err := LoadOrCreateCA(dir, []string{"api.test"})
	if err != nil || string(a.PEM) != string(b.PEM) {
		t.Fatalf("second load: %v, same=%v", err, string(a.PEM) == string(b.PEM))
	}
}

func TestReplacerAcrossReads(t *testing.T) {
	swaps := []swap{{old: "SECRET-VALUE", new: "placeholder-xx"}, {old: "abcdefgh", new: "X"}}
	in := "start SECRET-VALUE mid abcdefghabcdefgh SECRET-VALU end abcdefg SECRET-VALUE"
	want := "start placeholder-xx mid XX SECRET-VALU end abcdefg placeholder-xx"
	for _, r := range []io.Reader{strings.NewReader(in), iotest.OneByteReader(strings.NewReader(in)), iotest.HalfReader(strings.NewReader(in))} {
		var hits []int
		out, err := io.ReadAll(newReplacer(io.NopCloser(r), swapMatcher(swaps), func(i int) { hits = append(hits, i) }))
		if err != nil || string(out) != want || fmt.Sprint(hits) != "[0 1 1 0]" {
			t.Fatalf("got %q %v, hits %v; want %q", out, err, hits, want)
		}
	}
}

func TestPlaceholderLength(t *testing.T) {
	if p := NewPlaceholder(len(testValue)); len(p) != len(testValue) || p == NewPlaceholder(len(testValue)) {
		t.Fatalf("placeholder %q", p)
	}
	if p := NewPlaceholder(5); len(p) != minPlaceholder {
		t.Fatalf("short value's placeholder %q", p)
	}
}

func mustReq(u string) *http.Request {
	r, err := http.NewRequest("GET", u, nil)
	if err != nil {
		panic(err)
	}
	return r
}

// A failed round trip's error reaches the sandbox and the record: never
// with the value the gate swapped into the request.
func TestFailedRequestDoesNotShowTheValue(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nothing listens: the round trip fails
	tg := newTestGate(t, Options{
		Allow:   []string{fmt.Sprintf("api.test:%d", port)},
		Secrets: []Secret{{Name: "API_KEY", Hosts: []string{fmt.Sprintf("api.test:%d", port)}, Value: testValue}},
	}, map[string][]string{"api.test": {"127.0.0.1"}})
	ph := NewPlaceholder(len(testValue))
	if err := tg.Register(Sandbox{ID: "box1", Name: "sb", Placeholders: map[string]string{"API_KEY": ph}}); err != nil {
		t.Fatal(err)
	}
	resp, body := get(t, tg.client(), mustReq(fmt.Sprintf("http://api.test:%d/v1?key=%s", port, ph)))
	if resp.StatusCode < 500 || strings.Contains(body, testValue) {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	rec := waitRecord(t, tg, "api.test")
	b, _ := os.ReadFile(tg.dir + "/egress.jsonl")
	if strings.Contains(rec.Error, testValue) || strings.Contains(string(b), testValue) {
		t.Fatalf("the record holds the real value: %q", rec.Error)
	}
}

// F41: a bound host that answers compressed although the gate asked for
// gzip (which Go's transport decodes) would carry an echoed value past the
// scrub; the gate refuses such an answer.
func TestCompressedEchoIsRefused(t *testing.T) {
	cert := leafFor(t, upstreamCA(t), "api.test")
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "deflate")
		fw, _ := flate.NewWriter(w, flate.BestCompression)
		io.WriteString(fw, strings.Repeat("you sent "+r.Header.Get("Authorization")+"\n", 3))
		fw.Close()
	}))
	s.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	s.StartTLS()
	t.Cleanup(s.Close)
	port := s.Listener.Addr().(*net.TCPAddr).Port
	tg, ca, ph := secretGate(t, port, 1, false)
	req, _ := http.NewRequest("GET", fmt.Sprintf("https://api.test:%d/", port), nil)
	req.Header.Set("Authorization", "Bearer "+ph)
	c := trusting(tg, ca)
	c.Transport.(*http.Transport).DisableCompression = true
	resp, body := get(t, c, req)
	if got, _ := io.ReadAll(flate.NewReader(strings.NewReader(body))); strings.Contains(string(got), testValue) {
		t.Fatalf("the sandbox decoded the real value from a %d answer", resp.StatusCode)
	}
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "deflate") {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
}

// F42: a WebSocket to a bound host works, carries the value in its
// handshake, and what the host sends back has the value put back to the
// placeholder, without holding a message back.
func TestWebSocketToABoundHost(t *testing.T) {
	cert := leafFor(t, upstreamCA(t), "api.test")
	got := make(chan string, 1)
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization") + "|" + r.Header.Get("Sec-WebSocket-Extensions")
		c, brw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		io.WriteString(c, "auth="+r.Header.Get("Authorization")+"\n")
		io.Copy(c, brw) // then an echo
	}))
	s.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	s.StartTLS()
	t.Cleanup(s.Close)
	port := s.Listener.Addr().(*net.TCPAddr).Port
	tg, ca, ph := secretGate(t, port, 1, false)
	req, _ := http.NewRequest("GET", fmt.Sprintf("https://api.test:%d/ws", port), nil)
	req.Header.Set("Authorization", "Bearer "+ph)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Extensions", "permessage-deflate")
	c := trusting(tg, ca)
	c.Timeout = 0 // a 101's body is the connection only without one
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("got %d %q", resp.StatusCode, b)
	}
	if g := <-got; g != "Bearer "+testValue+"|" {
		t.Fatalf("the server got %q", g)
	}
	rw := resp.Body.(io.ReadWriter)
	line := make([]byte, len("auth=Bearer ")+len(ph)+1)
	if _, err := io.ReadFull(rw, line); err != nil || string(line) != "auth=Bearer "+ph+"\n" {
		t.Fatalf("read %q %v", line, err)
	}
	// An echo of what the sandbox sends comes back whole and at once: only
	// an end that could begin a run of the value waits for what follows.
	msg := "ping, and nothing more"
	io.WriteString(rw, msg)
	back := make([]byte, len(msg))
	if _, err := io.ReadFull(rw, back); err != nil || string(back) != msg {
		t.Fatalf("echo %q %v", back, err)
	}
	// A part of the value the host sends back shows as the same part of
	// the placeholder (F65), as long as it was: the frames hold.
	io.WriteString(rw, "ping "+testValue[5:])
	back = make([]byte, len("ping ")+len(ph)-5)
	if _, err := io.ReadFull(rw, back); err != nil || string(back) != "ping "+ph[5:] {
		t.Fatalf("echo of a part of the value: %q %v", back, err)
	}
}

// F43: a secret bound to a host by name goes there over HTTPS only; its
// placeholder in a plain-HTTP request to that host is refused, so the value
// never crosses the network in clear. A binding that names the port allows
// plain HTTP there.
func TestSecretGoesInClearOnlyWhereTheBindingSaysSo(t *testing.T) {
	_, port := echoServer(t, nil)
	tg := newTestGate(t, Options{
		Allow: []string{"api.test", fmt.Sprintf("local.test:%d", port)},
		Secrets: []Secret{
			{Name: "API_KEY", Hosts: []string{"api.test"}, Value: testValue},
			{Name: "LOCAL_KEY", Hosts: []string{fmt.Sprintf("local.test:%d", port)}, Value: testValue + "2"},
		},
	}, map[string][]string{"api.test": {"127.0.0.1"}, "local.test": {"127.0.0.1"}})
	ph, ph2 := NewPlaceholder(len(testValue)), NewPlaceholder(len(testValue)+1)
	if err := tg.Register(Sandbox{ID: "box1", Name: "sb", Placeholders: map[string]string{"API_KEY": ph, "LOCAL_KEY": ph2}}); err != nil {
		t.Fatal(err)
	}
	req := mustReq("http://api.test/v1")
	req.Header.Set("Authorization", "Bearer "+ph)
	resp, body := get(t, tg.client(), req)
	if resp.StatusCode != 403 || !strings.Contains(body, "secret API_KEY goes to api.test over HTTPS only") {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	if n := len(tg.dial.all()); n != 0 {
		t.Fatalf("the gate dialed %d times", n)
	}
	if rec := waitRecord(t, tg, "api.test"); rec.Violation != "API_KEY" {
		t.Fatalf("record %+v", rec)
	}
	req = mustReq(fmt.Sprintf("http://local.test:%d/?key=%s", port, ph2))
	if resp, body := get(t, tg.client(), req); resp.StatusCode != 200 || !strings.Contains(body, "key="+ph2) {
		t.Fatalf("plain HTTP where the binding names the port: %d %q", resp.StatusCode, body)
	}
}
