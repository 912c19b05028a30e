package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeResolver answers names from a table; a name with several answers
// gives them one per lookup (the last one again after that).
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][]string
	lookups map[string]int
}

func newResolver(answers map[string][]string) *fakeResolver {
	return &fakeResolver{answers: answers, lookups: map[string]int{}}
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seq, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := min(r.lookups[host], len(seq)-1)
	r.lookups[host]++
	return []netip.Addr{netip.MustParseAddr(seq[i])}, nil
}

func (r *fakeResolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookups[host]
}

// dialLog records what the gate dials; publicTo sends a dial of a public
// test address to a local server instead (nothing leaves this machine).
type dialLog struct {
	mu       sync.Mutex
	dialed   []string
	publicTo map[string]string
}

func (d *dialLog) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.dialed = append(d.dialed, addr)
	to := addr
	if r, ok := d.publicTo[addr]; ok {
		to = r
	}
	d.mu.Unlock()
	ap := netip.MustParseAddrPort(to)
	if !ap.Addr().IsLoopback() {
		return nil, fmt.Errorf("test dial of %s refused: tests only reach loopback", addr)
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, to)
}

func (d *dialLog) all() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.dialed...)
}

// pipeStream is the sandbox's end of a test connection, as the channel
// would hand it to the gate. A pipe has no half-close: the end of what the
// gate sends closes it, as a relay's client then sees EOF.
type pipeStream struct{ net.Conn }

func (p pipeStream) CloseWrite() error { return p.Conn.Close() }

// testGate is a gate with one sandbox, "box1" named "sb", a fake resolver
// and a dial log.
type testGate struct {
	*Gate
	res  *fakeResolver
	dial *dialLog
	dir  string
}

func newTestGate(t *testing.T, o Options, answers map[string][]string) *testGate {
	t.Helper()
	tg := &testGate{res: newResolver(answers), dial: &dialLog{publicTo: map[string]string{}}, dir: t.TempDir()}
	o.Resolver, o.Dial = tg.res, tg.dial.dial
	if o.RecordFile == "" {
		o.RecordFile = tg.dir + "/egress.jsonl"
	}
	g, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	tg.Gate = g
	if err := g.Register(Sandbox{ID: "box1", Name: "sb", Client: "test-client 1.0"}); err != nil {
		t.Fatal(err)
	}
	return tg
}

// conn opens a connection from sandbox id into the gate.
func (tg *testGate) conn(id string) net.Conn {
	mine, theirs := net.Pipe()
	tg.ServeConn(id, pipeStream{theirs})
	return mine
}

// raw sends one request (text up to the blank line) from sandbox box1 and
// returns the response and its body.
func (tg *testGate) raw(t *testing.T, req string) (*http.Response, string) {
	t.Helper()
	c := tg.conn("box1")
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("read the response to %q: %v", strings.SplitN(req, "\r\n", 2)[0], err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

// client is an HTTP client whose proxy is the gate, from sandbox box1.
func (tg *testGate) client() *http.Client {
	tr := &http.Transport{
		Proxy: http.ProxyURL(mustURL("http://127.0.0.1:3128")),
		DialContext: func(context.Context, string, string) (net.Conn, error) {
			return tg.conn("box1"), nil
		},
		TLSClientConfig: nil,
	}
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}
}

// server is a local HTTP server answering "hello from <path>".
func upstream(t *testing.T) (*httptest.Server, int) {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "hello from %s host %s got %d", r.URL.Path, r.Host, len(body))
	}))
	t.Cleanup(s.Close)
	return s, s.Listener.Addr().(*net.TCPAddr).Port
}
