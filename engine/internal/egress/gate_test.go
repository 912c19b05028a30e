package egress

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/internal/testwait"
)

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

func TestPlainHTTPThroughTheGate(t *testing.T) {
	_, port := upstream(t)
	tg := newTestGate(t, Options{Allow: []string{fmt.Sprintf("mirror.test:%d", port)}}, map[string][]string{"mirror.test": {"127.0.0.1"}})
	resp, err := tg.client().Post(fmt.Sprintf("http://mirror.test:%d/debian/x", port), "text/plain", strings.NewReader("12345"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != fmt.Sprintf("hello from /debian/x host mirror.test:%d got 5", port) {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	rec := waitRecord(t, tg, "mirror.test")
	if rec.Decision != DecisionAllow || rec.Method != "POST" || rec.Rule != fmt.Sprintf(`allow "mirror.test:%d" (config)`, port) ||
		rec.Address != fmt.Sprintf("127.0.0.1:%d", port) || rec.BytesUp != 5 || rec.BytesDown != int64(len(body)) || rec.Client != "test-client 1.0" {
		t.Fatalf("record = %+v", rec)
	}
}

func TestConnectThroughTheGate(t *testing.T) {
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secret page") }))
	t.Cleanup(s.Close)
	port := s.Listener.Addr().(*net.TCPAddr).Port
	tg := newTestGate(t, Options{Allow: []string{fmt.Sprintf("tls.test:%d", port)}}, map[string][]string{"tls.test": {"127.0.0.1"}})
	c := tg.client()
	c.Transport.(*http.Transport).TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
	resp, err := c.Get(fmt.Sprintf("https://tls.test:%d/", port))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	c.CloseIdleConnections()
	if string(body) != "secret page" {
		t.Fatalf("got %q", body)
	}
	rec := waitRecord(t, tg, "tls.test")
	if rec.Decision != DecisionAllow || rec.Method != "CONNECT" || rec.BytesUp == 0 || rec.BytesDown == 0 {
		t.Fatalf("record = %+v", rec)
	}
}

// waitRecord waits for sandbox box1's first record about host.
func waitRecord(t *testing.T, tg *testGate, host string) Record {
	t.Helper()
	var rec Record
	testwait.Eventually(t, 10*time.Second, "a record for "+host, func() bool {
		n, _ := tg.Network("box1")
		for _, r := range n.Recent {
			if r.Host == host {
				rec = r
				return true
			}
		}
		return false
	})
	return rec
}

func TestRefusals(t *testing.T) {
	_, port := upstream(t)
	tg := newTestGate(t, Options{
		Allow: []string{"public.test", "*.corp.test", "db.corp.test:5432", fmt.Sprintf("exact.corp.test:%d", port)},
		Deny:  []string{"example.com"},
	}, map[string][]string{
		"mirror.test": {"127.0.0.1"}, "wiki.corp.test": {"10.0.0.5"}, "exact.corp.test": {"127.0.0.1"},
		"db.corp.test": {"10.0.0.6"}, "meta.test": {"169.254.169.254"}, "public.test": {"93.184.216.34"},
	})
	cases := []struct {
		req, want string
	}{
		{"GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n",
			`sandtray egress: example.com:80 is denied by rule deny "example.com" (config) in the user's config`},
		{"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
			`sandtray egress: example.com:443 is denied by rule deny "example.com" (config)`},
		{"GET http://1.1.1.1/ HTTP/1.1\r\nHost: 1.1.1.1\r\n\r\n",
			"sandtray egress: 1.1.1.1:80 is an IP address no rule names"},
		{"GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n",
			"sandtray egress: 169.254.169.254:80 is an IP address no rule names"},
		{"CONNECT 172.17.0.1:443 HTTP/1.1\r\nHost: 172.17.0.1:443\r\n\r\n",
			"sandtray egress: 172.17.0.1:443 is an IP address no rule names"},
		{"GET http://wiki.corp.test/ HTTP/1.1\r\nHost: wiki.corp.test\r\n\r\n",
			"sandtray egress: wiki.corp.test:80 resolves to 10.0.0.5, a private address, which only a rule naming the host exactly in [egress] allow of the user's config.toml allows"},
		{"GET http://public.test:8080/ HTTP/1.1\r\nHost: public.test:8080\r\n\r\n",
			"sandtray egress: public.test:8080 is refused: a rule allows the host on ports 80 and 443 only"},
		{"GET http://unlisted.test/ HTTP/1.1\r\nHost: unlisted.test\r\n\r\n",
			"sandtray egress: unlisted.test:80 is not on the allow list; the user can allow it with `sandtray egress allow sb unlisted.test --always`"},
		{"GET http://host.sandtray.internal:5432/ HTTP/1.1\r\nHost: host.sandtray.internal:5432\r\n\r\n",
			"sandtray egress: host.sandtray.internal:5432 is refused: port 5432 of the host is not in egress.host_ports"},
	}
	for _, c := range cases {
		start := time.Now()
		resp, body := tg.raw(t, c.req)
		if resp.StatusCode != http.StatusForbidden || !strings.HasPrefix(body, c.want) || strings.Count(body, "\n") != 1 {
			t.Errorf("%s: got %d %q, want 403 %q…", strings.SplitN(c.req, "\r\n", 2)[0], resp.StatusCode, body, c.want)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: refused after %s", strings.SplitN(c.req, "\r\n", 2)[0], d)
		}
	}
	if d := tg.dial.all(); len(d) != 0 {
		t.Errorf("the gate dialed %v for refused requests", d)
	}
	for _, name := range []string{"example.com", "unlisted.test", "public.test"} {
		if tg.res.count(name) != 0 {
			t.Errorf("%s, refused by the rules, was resolved", name)
		}
	}
}

func TestExplicitRuleReachesAPrivateAddress(t *testing.T) {
	_, port := upstream(t)
	target := fmt.Sprintf("exact.corp.test:%d", port)
	tg := newTestGate(t, Options{Allow: []string{target, "*.corp.test"}}, map[string][]string{"exact.corp.test": {"127.0.0.1"}, "other.corp.test": {"127.0.0.1"}})
	resp, body := tg.raw(t, "GET http://"+target+"/ok HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
	if resp.StatusCode != 200 || !strings.HasPrefix(body, "hello from /ok") {
		t.Fatalf("explicit rule: got %d %q", resp.StatusCode, body)
	}
	resp, body = tg.raw(t, "GET http://other.corp.test/ HTTP/1.1\r\nHost: other.corp.test\r\n\r\n")
	if resp.StatusCode != 403 || !strings.Contains(body, "127.0.0.1, a loopback address") {
		t.Fatalf("wildcard rule to loopback: got %d %q", resp.StatusCode, body)
	}
}

func TestHostHeaderIsTheDecidedHost(t *testing.T) {
	_, port := upstream(t)
	target := fmt.Sprintf("mirror.test:%d", port)
	tg := newTestGate(t, Options{Allow: []string{target}}, map[string][]string{"mirror.test": {"127.0.0.1"}})
	// A Host header naming another site on the same server (domain
	// fronting). net/http already takes an absolute-form request's host
	// from its URL; the gate sets it again, so neither alone can let it by.
	_, body := tg.raw(t, "GET http://"+target+"/a HTTP/1.1\r\nHost: other-site.example\r\n\r\n")
	if !strings.Contains(body, "host "+target) {
		t.Fatalf("the server saw %q; want Host %s", body, target)
	}
}

func TestDialsTheAddressItChecked(t *testing.T) {
	_, port := upstream(t)
	// The first answer is public, the second loopback: a rebinding
	// resolver. The gate must resolve once and dial what it checked.
	tg := newTestGate(t, Options{Allow: []string{fmt.Sprintf("rebind.test:%d", port)}},
		map[string][]string{"rebind.test": {"93.184.216.34", "127.0.0.1"}})
	public := fmt.Sprintf("93.184.216.34:%d", port)
	tg.dial.publicTo[public] = fmt.Sprintf("127.0.0.1:%d", port)
	resp, body := tg.raw(t, fmt.Sprintf("GET http://rebind.test:%d/ HTTP/1.1\r\nHost: rebind.test\r\n\r\n", port))
	if resp.StatusCode != 200 {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	if d := tg.dial.all(); !slices.Equal(d, []string{public}) || tg.res.count("rebind.test") != 1 {
		t.Fatalf("dialed %v after %d lookups; want [%s] after 1", d, tg.res.count("rebind.test"), public)
	}
}

func TestHostAlias(t *testing.T) {
	_, port := upstream(t)
	tg := newTestGate(t, Options{HostPorts: []int{port}}, nil)
	target := fmt.Sprintf("host.sandtray.internal:%d", port)
	resp, body := tg.raw(t, "GET http://"+target+"/svc HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
	if resp.StatusCode != 200 || !strings.HasPrefix(body, "hello from /svc") {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	if d := tg.dial.all(); !slices.Equal(d, []string{fmt.Sprintf("127.0.0.1:%d", port)}) {
		t.Fatalf("dialed %v", d)
	}
	rec := waitRecord(t, tg, HostAlias)
	if rec.Rule != fmt.Sprintf("egress.host_ports %d", port) {
		t.Fatalf("record %+v", rec)
	}
}

func TestUnknownSandboxIsRefused(t *testing.T) {
	_, port := upstream(t)
	tg := newTestGate(t, Options{Allow: []string{"*"}}, map[string][]string{"mirror.test": {"127.0.0.1"}})
	c := tg.conn("not-registered")
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "GET http://mirror.test:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", port)
	if _, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
		t.Fatal("a connection of an unknown sandbox was served")
	}
}

func TestRecordFile(t *testing.T) {
	tg := newTestGate(t, Options{Deny: []string{"example.com"}}, nil)
	tg.raw(t, "GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n")
	waitRecord(t, tg, "example.com")
	b, err := os.ReadFile(tg.dir + "/egress.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var rec Record
	if err := json.Unmarshal([]byte(strings.TrimSpace(string(b))), &rec); err != nil {
		t.Fatalf("%q: %v", b, err)
	}
	if rec.SandboxID != "box1" || rec.Sandbox != "sb" || rec.Host != "example.com" || rec.Port != 80 || rec.Method != "GET" ||
		rec.Decision != DecisionDeny || rec.Rule != `deny "example.com" (config)` || rec.Client != "test-client 1.0" || rec.Time.IsZero() {
		t.Fatalf("record = %+v", rec)
	}
}

func TestRecordFileRotates(t *testing.T) {
	r := newRecorder(t.TempDir()+"/egress.jsonl", 1000)
	for i := range 50 {
		if err := r.append(Record{Host: fmt.Sprintf("h%d.example", i)}); err != nil {
			t.Fatal(err)
		}
	}
	cur, err1 := os.Stat(r.path)
	old, err2 := os.Stat(r.path + ".1")
	if err1 != nil || err2 != nil || cur.Size() > 1000 || old.Size() > 1000 {
		t.Fatalf("files: %v %v %v %v", cur, err1, old, err2)
	}
}
