package egress

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/testwait"
)

// asked starts a request from box1 that will wait for the user, and
// returns the pending request and a channel with the response.
func asked(t *testing.T, tg *testGate, req string) (Pending, <-chan string) {
	t.Helper()
	out := make(chan string, 1)
	go func() {
		c := tg.conn("box1")
		defer c.Close()
		io.WriteString(c, req)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			out <- "error: " + err.Error()
			return
		}
		body, _ := io.ReadAll(resp.Body)
		out <- fmt.Sprintf("%d %s", resp.StatusCode, body)
	}()
	var p Pending
	testwait.Eventually(t, 2*time.Second, "the request to be pending", func() bool {
		list := tg.Pending()
		if len(list) == 1 {
			p = list[0]
		}
		return len(list) == 1
	})
	return p, out
}

func askGate(t *testing.T, port int) *testGate {
	return newTestGate(t, Options{Allow: []string{}, Ask: true, AskTimeout: time.Minute},
		map[string][]string{"new.test": {"93.184.216.34"}, "lan.test": {"192.168.1.1"}})
}

func TestAskAllowOnce(t *testing.T) {
	_, port := upstream(t)
	tg := askGate(t, port)
	tg.dial.publicTo[fmt.Sprintf("93.184.216.34:%d", port)] = fmt.Sprintf("127.0.0.1:%d", port)
	p, out := asked(t, tg, fmt.Sprintf("GET http://new.test:%d/a HTTP/1.1\r\nHost: new.test\r\n\r\n", port))
	if p.SandboxID != "box1" || p.Sandbox != "sb" || p.Host != "new.test" || p.Port != port || p.Method != "GET" || p.Client != "test-client 1.0" {
		t.Fatalf("pending = %+v", p)
	}
	if err := tg.Answer(p.ID, AllowOnce); err != nil {
		t.Fatal(err)
	}
	if got := <-out; !strings.HasPrefix(got, "200 hello from /a") {
		t.Fatalf("got %q", got)
	}
	if rec := waitRecord(t, tg, "new.test"); rec.Decision != DecisionAllow || rec.Rule != "allowed once by the user" {
		t.Fatalf("record %+v", rec)
	}
	// Once: the next request asks again.
	p2, out2 := asked(t, tg, fmt.Sprintf("GET http://new.test:%d/b HTTP/1.1\r\nHost: new.test\r\n\r\n", port))
	tg.Answer(p2.ID, DenyOnce)
	if got := <-out2; !strings.HasPrefix(got, "403 sandtray egress: new.test:"+fmt.Sprint(port)+" was denied by the user") {
		t.Fatalf("got %q", got)
	}
}

func TestAskAllowForTheSandboxIsSaved(t *testing.T) {
	tg := askGate(t, 0)
	var mu sync.Mutex
	var saved []SandboxRules
	tg.Register(Sandbox{ID: "box1", Name: "sb", Save: func(r SandboxRules) { mu.Lock(); saved = append(saved, r); mu.Unlock() }})
	_, out := asked(t, tg, "CONNECT new.test:443 HTTP/1.1\r\nHost: new.test:443\r\n\r\n")
	n, err := tg.AnswerHost("box1", "new.test", 0, AllowSandbox)
	if err != nil || n != 1 {
		t.Fatalf("AnswerHost = %d, %v", n, err)
	}
	<-out // the dial to the fake public address fails: 502; what matters is the rule
	mu.Lock()
	defer mu.Unlock()
	if len(saved) != 1 || !slices.Equal(saved[0].Allow, []string{"new.test"}) {
		t.Fatalf("saved %+v", saved)
	}
	nw, _ := tg.Network("box1")
	if !slices.Equal(nw.Rules.Allow, []string{"new.test"}) {
		t.Fatalf("rules %+v", nw.Rules)
	}
	rec := waitRecord(t, tg, "new.test")
	if rec.Rule != `allow "new.test" (sandbox)` {
		t.Fatalf("record %+v", rec)
	}
}

func TestAskDenyIsImmediate(t *testing.T) {
	tg := askGate(t, 0)
	_, out := asked(t, tg, "GET http://new.test/ HTTP/1.1\r\nHost: new.test\r\n\r\n")
	start := time.Now()
	if _, err := tg.AnswerHost("box1", "new.test", 80, DenyOnce); err != nil {
		t.Fatal(err)
	}
	got := <-out
	if !strings.HasPrefix(got, "403 sandtray egress: new.test:80 was denied by the user") || time.Since(start) > 2*time.Second {
		t.Fatalf("got %q after %s", got, time.Since(start))
	}
	if len(tg.Pending()) != 0 {
		t.Fatal("still pending")
	}
}

func TestAskTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tg := askGate(t, 0)
		c := tg.conn("box1")
		defer c.Close()
		start := time.Now()
		go io.WriteString(c, "GET http://new.test/ HTTP/1.1\r\nHost: new.test\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if waited := time.Since(start); resp.StatusCode != 403 || waited != time.Minute ||
			!strings.HasPrefix(string(body), "sandtray egress: new.test:80 got no answer from the user within 1m0s (egress.ask_timeout)") {
			t.Fatalf("after %s: %d %q", waited, resp.StatusCode, body)
		}
		if len(tg.Pending()) != 0 {
			t.Fatal("still pending after the timeout")
		}
		tg.Close()
	})
}

func TestPrivateAndLiteralsAreNeverAsked(t *testing.T) {
	tg := askGate(t, 0)
	for _, req := range []string{
		"GET http://lan.test/ HTTP/1.1\r\nHost: lan.test\r\n\r\n",
		"GET http://8.8.8.8/ HTTP/1.1\r\nHost: 8.8.8.8\r\n\r\n",
	} {
		resp, body := tg.raw(t, req)
		if resp.StatusCode != 403 {
			t.Fatalf("%q: %d %q", req, resp.StatusCode, body)
		}
	}
	if len(tg.Pending()) != 0 {
		t.Fatal("asked")
	}
}

func TestRequestNetwork(t *testing.T) {
	tg := newTestGate(t, Options{Allow: []string{"pypi.org"}, Deny: []string{"evil.test"}, Ask: true},
		map[string][]string{"pypi.org": {"151.101.0.223"}, "new.test": {"93.184.216.34"}, "lan.test": {"10.1.1.1"}})
	res, err := tg.Request(t.Context(), "box1", []string{"pypi.org", "evil.test", "new.test:8443", "lan.test", "1.2.3.4", "*.x.test"}, "to fetch the data set")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Allowed, []string{"pypi.org"}) || !slices.Equal(res.Pending, []string{"new.test:8443"}) || len(res.Denied) != 4 {
		t.Fatalf("result %+v", res)
	}
	p := tg.Pending()
	if len(p) != 1 || p[0].Host != "new.test" || p[0].Port != 8443 || p[0].Reason != "to fetch the data set" {
		t.Fatalf("pending %+v", p)
	}
	// Allowed once: a grant for the next minutes, as no connection waited.
	if err := tg.Answer(p[0].ID, AllowOnce); err != nil {
		t.Fatal(err)
	}
	res, _ = tg.Request(t.Context(), "box1", []string{"new.test:8443"}, "")
	if !slices.Equal(res.Allowed, []string{"new.test:8443"}) {
		t.Fatalf("after allow once: %+v", res)
	}
	if _, err := tg.Request(t.Context(), "nobox", []string{"pypi.org"}, ""); !errors.Is(err, sandbox.ErrInvalid) {
		t.Fatalf("unknown sandbox: %v", err)
	}
}

func TestAnswerWithoutPending(t *testing.T) {
	tg := askGate(t, 0)
	if _, err := tg.AnswerHost("box1", "new.test", 0, AllowOnce); !errors.Is(err, sandbox.ErrNotFound) {
		t.Fatalf("allow once with nothing pending: %v", err)
	}
	if n, err := tg.AnswerHost("box1", "new.test", 0, AllowGlobal); err != nil || n != 0 {
		t.Fatalf("allow global up front: %d %v", n, err)
	}
	tg.Register(Sandbox{ID: "box2", Name: "other"})
	res, _ := tg.Request(t.Context(), "box2", []string{"new.test"}, "")
	if !slices.Equal(res.Allowed, []string{"new.test"}) {
		t.Fatalf("a global approval did not reach another sandbox: %+v", res)
	}
	if err := tg.Answer("nope", AllowOnce); !errors.Is(err, sandbox.ErrNotFound) {
		t.Fatal(err)
	}
}
