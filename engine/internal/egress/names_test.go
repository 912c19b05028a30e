package egress

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// F67: however a sandbox writes a denied name (upper case, a trailing dot,
// two), the deny holds; a name that is no host name is refused before any
// rule, lookup or record sees it.
func TestDenyHoldsForEveryWayANameIsWritten(t *testing.T) {
	_, port := upstream(t)
	public := "93.184.216.34"
	tg := newTestGate(t, Options{Allow: []string{"*"}, Deny: []string{"evil.test"}}, map[string][]string{
		"evil.test": {public}, "evil.test.": {public}, "evil.test..": {public}, "ok.test": {public},
	})
	tg.dial.publicTo[public+":80"] = fmt.Sprintf("127.0.0.1:%d", port)
	tg.dial.publicTo[public+":443"] = fmt.Sprintf("127.0.0.1:%d", port)
	for _, c := range []struct{ req, status, want string }{
		{"GET http://EVIL.test/ HTTP/1.1\r\nHost: x\r\n\r\n", "403", `sandtray egress: evil.test:80 is denied by rule deny "evil.test" (config)`},
		{"GET http://evil.test./ HTTP/1.1\r\nHost: x\r\n\r\n", "403", `sandtray egress: evil.test:80 is denied by rule deny "evil.test" (config)`},
		{"GET http://evil.test../ HTTP/1.1\r\nHost: x\r\n\r\n", "400", `sandtray egress: "evil.test.." is not a host name`},
		{"CONNECT evil.test..:443 HTTP/1.1\r\nHost: x\r\n\r\n", "400", `sandtray egress: "evil.test.." is not a host name`},
		{"CONNECT Evil.Test.:443 HTTP/1.1\r\nHost: x\r\n\r\n", "403", `sandtray egress: evil.test:443 is denied by rule deny "evil.test" (config)`},
		{"GET http://2130706433/ HTTP/1.1\r\nHost: x\r\n\r\n", "400", `sandtray egress: "2130706433" is not a host name`},
		{"GET http://0x7f.1/ HTTP/1.1\r\nHost: x\r\n\r\n", "400", `sandtray egress: "0x7f.1" is not a host name`},
		{"GET http://[fe80::1%25eth0]/ HTTP/1.1\r\nHost: x\r\n\r\n", "400", `sandtray egress: "[fe80::1%eth0]" is not a host name`},
	} {
		resp, body := tg.raw(t, c.req)
		if fmt.Sprint(resp.StatusCode) != c.status || !strings.HasPrefix(body, c.want) {
			t.Errorf("%s: got %d %q, want %s %q…", firstLine(c.req), resp.StatusCode, body, c.status, c.want)
		}
	}
	if d := tg.dial.all(); len(d) != 0 {
		t.Errorf("the gate dialed %v", d)
	}
	for _, name := range []string{"evil.test", "evil.test.", "evil.test.."} {
		if n := tg.res.count(name); n != 0 {
			t.Errorf("%q was looked up %d times", name, n)
		}
	}
}

// F68: a port past 65535 is refused, never dialed as what it wraps to.
func TestPortsPast65535AreRefused(t *testing.T) {
	_, port := upstream(t)
	public := "93.184.216.34"
	tg := newTestGate(t, Options{Allow: []string{}, Ask: true, AskTimeout: time.Minute}, map[string][]string{"ok.test": {public}})
	tg.dial.publicTo[fmt.Sprintf("%s:%d", public, port)] = fmt.Sprintf("127.0.0.1:%d", port)
	wrapped := port + 65536
	for _, req := range []string{
		fmt.Sprintf("GET http://ok.test:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", wrapped),
		fmt.Sprintf("CONNECT ok.test:%d HTTP/1.1\r\nHost: x\r\n\r\n", wrapped),
		"CONNECT ok.test:0 HTTP/1.1\r\nHost: x\r\n\r\n",
	} {
		out := make(chan string, 1)
		go func() {
			c := tg.conn("box1")
			defer c.Close()
			c.SetDeadline(time.Now().Add(20 * time.Second))
			io.WriteString(c, req)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				out <- "error: " + err.Error()
				return
			}
			body, _ := io.ReadAll(resp.Body)
			out <- fmt.Sprintf("%d %s", resp.StatusCode, body)
		}()
		var got string
	wait:
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
			select {
			case got = <-out:
				break wait
			case <-time.After(20 * time.Millisecond):
			}
			// The old gate asked about it: allowing it once showed where it went.
			for _, p := range tg.Pending() {
				tg.Answer(p.ID, AllowOnce)
			}
		}
		if !strings.HasPrefix(got, "400 sandtray egress: ") || !strings.Contains(got, "is not a port: use one from 1 to 65535") {
			t.Errorf("%s: got %q, want a 400 saying the port is not one", firstLine(req), got)
		}
	}
	if d := tg.dial.all(); len(d) != 0 {
		t.Errorf("the gate dialed %v", d)
	}
}

// F62: a deny wins over egress.host_ports, however the host is named, and a
// deny of an address holds for a name that resolves to it.
func TestDenyWinsOverTheHostAliasAndNamesOfADeniedAddress(t *testing.T) {
	_, port := upstream(t)
	public := "93.184.216.34"
	target := fmt.Sprintf("host.sandtray.internal:%d", port)
	for deny, want := range map[string]string{
		"host.sandtray.internal":  ` is denied by rule deny "host.sandtray.internal" (config)`,
		"HOST.sandtray.internal.": ` is denied by rule deny "host.sandtray.internal" (config)`,
		target:                    ` is denied by rule deny "` + target + `" (config)`,
		"127.0.0.1":               ` reaches 127.0.0.1, which is denied by rule deny "127.0.0.1" (config)`,
	} {
		tg := newTestGate(t, Options{HostPorts: []int{port}, Deny: []string{deny}}, nil)
		for _, name := range []string{"host.sandtray.internal", "Host.Sandtray.Internal."} {
			for _, req := range []string{"GET http://%s:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", "CONNECT %s:%d HTTP/1.1\r\nHost: x\r\n\r\n"} {
				req = fmt.Sprintf(req, name, port)
				resp, body := tg.raw(t, req)
				if resp.StatusCode != 403 || !strings.HasPrefix(body, "sandtray egress: "+target+want) {
					t.Errorf("deny %q, %s: got %d %q", deny, firstLine(req), resp.StatusCode, body)
				}
			}
		}
		if d := tg.dial.all(); len(d) != 0 {
			t.Errorf("deny %q: the gate dialed %v", deny, d)
		}
	}
	// An address denied, a name allowed that resolves to it.
	tg := newTestGate(t, Options{Allow: []string{"*"}, Deny: []string{public}}, map[string][]string{"cdn.test": {public}})
	tg.dial.publicTo[public+":80"] = fmt.Sprintf("127.0.0.1:%d", port)
	resp, body := tg.raw(t, "GET http://cdn.test/ HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp.StatusCode != 403 || !strings.HasPrefix(body, "sandtray egress: cdn.test:80 resolves to "+public+", which is denied by rule deny \""+public+"\" (config)") {
		t.Errorf("a name of a denied address: got %d %q", resp.StatusCode, body)
	}
	if d := tg.dial.all(); len(d) != 0 {
		t.Errorf("the gate dialed %v", d)
	}
}

func firstLine(s string) string { return strings.SplitN(s, "\r\n", 2)[0] }

// A name that does not resolve is refused in words, not with the
// resolver's error text.
func TestUnresolvedNameSaysSo(t *testing.T) {
	tg := newTestGate(t, Options{Allow: []string{"*"}}, nil)
	for _, req := range []string{"GET http://nosuch.test/ HTTP/1.1\r\nHost: x\r\n\r\n", "CONNECT nosuch.test:443 HTTP/1.1\r\nHost: x\r\n\r\n"} {
		resp, body := tg.raw(t, req)
		if want := "sandtray egress: could not resolve nosuch.test: no such name; check its spelling\n"; resp.StatusCode != 502 || body != want {
			t.Errorf("%s: got %d %q, want 502 %q", firstLine(req), resp.StatusCode, body, want)
		}
	}
}

// A refused CONNECT says why in its status line too, which is what most
// clients show of it (a CONNECT refusal's body rarely is).
func TestConnectRefusalSaysWhyInItsStatusLine(t *testing.T) {
	tg := newTestGate(t, Options{Deny: []string{"example.com"}}, nil)
	resp, body := tg.raw(t, "CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n")
	if want := "403 " + strings.TrimSpace(body); resp.Status != want || !strings.HasPrefix(body, "sandtray egress: example.com:443 is denied by rule") {
		t.Fatalf("status %q, body %q; want the body's line as the status's reason", resp.Status, body)
	}
	_, err := tg.client().Get("https://example.com/")
	if err == nil || !strings.Contains(err.Error(), `sandtray egress: example.com:443 is denied by rule deny "example.com" (config)`) {
		t.Fatalf("Go's client says %v", err)
	}
}

// A connection that fails says why in words, in the status line too.
func TestFailedConnectionSaysWhy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nothing listens
	tg := newTestGate(t, Options{Allow: []string{fmt.Sprintf("down.test:%d", port)}}, map[string][]string{"down.test": {"127.0.0.1"}})
	want := fmt.Sprintf("sandtray egress: could not connect to 127.0.0.1:%d: connection refused (nothing listens on that port)", port)
	resp, body := tg.raw(t, fmt.Sprintf("CONNECT down.test:%d HTTP/1.1\r\nHost: x\r\n\r\n", port))
	if resp.StatusCode != 502 || resp.Status != "502 "+want || body != want+"\n" {
		t.Errorf("CONNECT: got %q %q, want 502 %q", resp.Status, body, want)
	}
	resp, body = tg.raw(t, fmt.Sprintf("GET http://down.test:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", port))
	if resp.StatusCode != 502 || body != want+"\n" {
		t.Errorf("GET: got %q %q, want 502 %q", resp.Status, body, want)
	}
	if rec := waitRecord(t, tg, "down.test"); rec.Error != want {
		t.Errorf("record %+v", rec)
	}
}
