package egress

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rawAsync sends req from box1 while it reads the answer (a request the
// gate stops reading part-way must not leave the writer stuck), and
// returns the status, or 0 when the connection ended without one.
func (tg *testGate) rawAsync(t *testing.T, req ...[]byte) (int, string) {
	t.Helper()
	c := tg.conn("box1")
	defer c.Close()
	c.SetDeadline(time.Now().Add(60 * time.Second))
	go func() {
		for _, b := range req {
			if _, err := c.Write(b); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err.Error()
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	return resp.StatusCode, string(body)
}

// F63: a request line and headers past the gate's limit are refused with
// 431, from the sandbox and inside a bound host's terminated TLS, and
// nothing of them is recorded.
func TestHugeHeadersAreRefusedAndNotKept(t *testing.T) {
	cert := leafFor(t, upstreamCA(t), "api.test")
	_, apiPort := echoServer(t, &cert)
	tg, ca, ph := secretGate(t, apiPort, 1, false)
	huge := strings.Repeat("a", 900_000)
	for _, req := range []string{
		"CONNECT " + huge + ".test:443 HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET http://" + huge + ".test/ HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET http://other.test/ HTTP/1.1\r\nHost: x\r\nX-Big: " + huge[:100_000] + "\r\n\r\n",
	} {
		if status, body := tg.rawAsync(t, []byte(req)); status != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("%.40s…: got %d %.200q, want 431", req, status, body)
		}
	}
	req, _ := http.NewRequest("GET", fmt.Sprintf("https://api.test:%d/", apiPort), nil)
	req.Header.Set("Authorization", "Bearer "+ph)
	req.Header.Set("X-Big", huge[:100_000])
	c := trusting(tg, ca)
	if resp, _ := get(t, c, req); resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("inside a terminated TLS: got %d, want 431", resp.StatusCode)
	}
	req.Header.Del("X-Big")
	if resp, body := get(t, c, req); resp.StatusCode != 200 || !strings.Contains(body, "auth=Bearer "+ph) {
		t.Errorf("then a request within the limit: %d %q", resp.StatusCode, body)
	}
	n, _ := tg.Network("box1")
	for _, r := range n.Recent {
		if len(r.Host) > 253 || r.Host == "other.test" {
			t.Errorf("a refused header was recorded: %.100q", r.Host)
		}
	}
	b, _ := os.ReadFile(tg.dir + "/egress.jsonl")
	for line := range bytes.Lines(b) {
		if len(line) > 2048 {
			t.Errorf("egress.jsonl has a line of %d bytes", len(line))
		}
	}
}

// heapBytes is the heap's objects now, live or not yet swept (the cheap
// metric, read without stopping the world).
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// bodyOf is a body of n bytes that starts with ph and is zeros after it,
// made as it is read.
func bodyOf(ph string, n int) io.Reader {
	return io.MultiReader(strings.NewReader(ph), io.LimitReader(zeros{}, int64(n-len(ph))))
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// F63: the red team's attack on the gate's memory, in one process: 120
// CONNECTs to 900 KB names, 30 at a time, and 12 request bodies of 32 MiB
// at once into which the gate swaps a secret, then 6 of 30 MiB of a secret
// whose value is shorter than its placeholder (which the gate must hold
// whole to know its length). The gate's heap stays within a bound
// throughout, and keeps nothing after.
func TestGateMemoryUnderAttack(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 500 MiB through the gate")
	}
	const shortValue = "short-value-0123456"
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// It says which value it got (were it to echo one, the gate would
		// put the placeholder back).
		head := make([]byte, len(testValue))
		io.ReadFull(r.Body, head)
		n, _ := io.Copy(io.Discard, r.Body)
		got := map[string]string{testValue: "long", shortValue: "short"}[string(bytes.TrimRight(head, "\x00"))]
		fmt.Fprintf(w, "%s+%d", got, int64(len(head))+n)
	}))
	t.Cleanup(s.Close)
	port := s.Listener.Addr().(*net.TCPAddr).Port
	api, short := fmt.Sprintf("api.test:%d", port), fmt.Sprintf("short.test:%d", port)
	tg := newTestGate(t, Options{Allow: []string{api, short}, Secrets: []Secret{
		{Name: "LONG_KEY", Hosts: []string{api}, Value: testValue, Body: true},
		{Name: "SHORT_KEY", Hosts: []string{short}, Value: shortValue, Body: true},
	}}, map[string][]string{"api.test": {"127.0.0.1"}, "short.test": {"127.0.0.1"}})
	phLong, phShort := NewPlaceholder(len(testValue)), NewPlaceholder(len(shortValue))
	if err := tg.Register(Sandbox{ID: "box1", Name: "sb", Placeholders: map[string]string{"LONG_KEY": phLong, "SHORT_KEY": phShort}}); err != nil {
		t.Fatal(err)
	}
	huge := bytes.Repeat([]byte("a"), 900_000)
	tail := []byte(".test:443 HTTP/1.1\r\nHost: x\r\n\r\n")
	base := liveHeap()
	var peak atomic.Uint64
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if h := heapBytes(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()

	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[string]int{}
	count := func(what string) {
		mu.Lock()
		statuses[what]++
		mu.Unlock()
	}
	sem := make(chan struct{}, 30)
	for i := range 120 {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			status, _ := tg.rawAsync(t, fmt.Appendf(nil, "CONNECT %d", i), huge, tail)
			count(fmt.Sprint("connect ", status))
		})
	}
	c := tg.client()
	c.Timeout = 5 * time.Minute // 400 MiB through the gate, under -race, on a busy machine
	post := func(host, ph string, size int) (int, string) {
		req, _ := http.NewRequest("POST", "http://"+host+"/upload", bodyOf(ph, size))
		req.ContentLength = int64(size)
		resp, err := c.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	for range 12 {
		wg.Go(func() {
			status, body := post(api, phLong, 32<<20)
			if status != 200 || body != fmt.Sprintf("long+%d", 32<<20) {
				t.Errorf("a long body: %d %q", status, body)
			}
			count(fmt.Sprint("long ", status))
		})
	}
	wg.Wait()
	streamed := peak.Swap(0)
	for range 6 {
		wg.Go(func() {
			status, body := post(short, phShort, 30<<20)
			switch {
			case status == 200 && body != fmt.Sprintf("short+%d", 30<<20-(len(phShort)-len(shortValue))):
				t.Errorf("the server got %q", body)
			case status == http.StatusServiceUnavailable && !strings.Contains(body, "request bodies"):
				t.Errorf("a refusal without a word of why: %q", body)
			}
			count(fmt.Sprint("short ", status))
		})
	}
	wg.Wait()
	close(stop)
	<-sampled
	after := liveHeap()
	held := peak.Load()
	t.Logf("heap: %d MiB before, peak %d MiB with the CONNECTs and streamed bodies, %d MiB with bodies held whole, %d MiB after; %v",
		base>>20, streamed>>20, held>>20, after>>20, statuses)
	if statuses["connect 431"] != 120 || statuses["long 200"] != 12 || statuses["short 200"] == 0 {
		t.Errorf("statuses %v; want 120 CONNECTs refused with 431, 12 long bodies through, and at least one short one", statuses)
	}
	if grew := int64(streamed) - int64(base); grew > 32<<20 {
		t.Errorf("the heap grew by %d MiB under the CONNECTs and the bodies a secret is streamed into; want at most 32", grew>>20)
	}
	if grew := int64(held) - int64(base); grew > 160<<20 {
		t.Errorf("the heap grew by %d MiB under the bodies the gate holds whole; want at most 160 (a budget of %d MiB, and what the collector has not yet taken back)", grew>>20, swapBudget>>20)
	}
	if kept := int64(after) - int64(base); kept > 16<<20 {
		t.Errorf("the gate kept %d MiB after the attack; want at most 16", kept>>20)
	}
}
