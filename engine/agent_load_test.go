package engine

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// parallelGets opens n connections at once through the sandbox's proxy to
// url, each a GET, and prints how many answered 200.
const parallelGets = `import sys, threading, urllib.request
n, url = int(sys.argv[1]), sys.argv[2]
ok = []; lock = threading.Lock(); start = threading.Barrier(n)
def get():
    start.wait()
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            if r.status == 200 and r.read() == b"ok":
                with lock: ok.append(1)
    except Exception as e:
        print("error", e, file=sys.stderr)
ts = [threading.Thread(target=get) for _ in range(n)]
[t.start() for t in ts]; [t.join() for t in ts]
print(len(ok))
`

// TestManyConnectionsAndSandboxes: 200 connections at once from one
// sandbox through the egress gate all go through, and 20 sandboxes made and
// used at once all answer, while the engine's heap stays within tens of MB.
func TestManyConnectionsAndSandboxes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(200 * time.Millisecond) // so the connections are open at once
		w.Write([]byte("ok"))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	port := ln.Addr().(*net.TCPAddr).Port
	te := newTestEngine(t, func(c *config.Config) { c.Egress.HostPorts = []int{port}; c.Limits.MaxSandboxes = 32 })
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{Network: sandbox.NetworkEgress}).ID
	if _, err := te.WriteFile(ctx, te.owner, id, sandbox.WriteRequest{Path: "/tmp/gets.py", Data: []byte(parallelGets)}); err != nil {
		t.Fatal(err)
	}
	rise, _ := heapPeak(func() {
		out, err := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Timeout: 5 * time.Minute, Wait: 5 * time.Minute,
			Command: fmt.Sprintf("python3 /tmp/gets.py 200 http://host.sandtray.internal:%d/", port)})
		if err != nil || strings.TrimSpace(out.Result.Stdout) != "200" {
			t.Errorf("200 connections at once through the gate: %v, %q answered, stderr %.500q", err, out.Result.Stdout, out.Result.Stderr)
		}
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				info, err := te.Create(ctx, te.owner, sandbox.CreateRequest{Name: fmt.Sprintf("many-%d", i)}, nil)
				if err != nil {
					t.Errorf("sandbox %d: %v", i, err)
					return
				}
				want := fmt.Sprintf("sandbox %d\n", i)
				out, err := te.ExecCommand(ctx, te.owner, info.ID, sandbox.CommandRequest{Command: "echo sandbox " + fmt.Sprint(i)})
				if err != nil || out.Result.Stdout != want {
					t.Errorf("sandbox %d: %v, %q", i, err, out.Result.Stdout)
				}
				if _, err := te.WriteFile(ctx, te.owner, info.ID, sandbox.WriteRequest{Path: "f", Data: []byte(want)}); err != nil {
					t.Errorf("sandbox %d: write_file: %v", i, err)
				}
			})
		}
		wg.Wait()
	})
	if rise > 64<<20 {
		t.Errorf("the engine's heap rose by %d MB", rise>>20)
	}
}
