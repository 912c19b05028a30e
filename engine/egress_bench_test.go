package engine

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/test/dockertest"
)

// egressBenchPy runs inside an egress sandbox: n sequential requests, each
// on a new connection, to a server on the sandbox's own loopback (no gate:
// the baseline) and to the host's server through the gate
// (host.sandtray.internal), then one download of the host's /big through
// the gate. It prints the medians in ms and the download's MB/s.
const egressBenchPy = `import socket,time,sys,statistics,threading,http.server
n,port,big=int(sys.argv[1]),int(sys.argv[2]),int(sys.argv[3])
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200);self.send_header("Content-Length","2");self.end_headers();self.wfile.write(b"ok")
    def log_message(self,*a):pass
srv=http.server.ThreadingHTTPServer(("127.0.0.1",8099),H)
threading.Thread(target=srv.serve_forever,daemon=True).start()
def get(addr,target):
    t=time.perf_counter()
    s=socket.create_connection(addr)
    s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"%target).encode())
    got=0
    while True:
        b=s.recv(1<<20)
        if not b:break
        got+=len(b)
    s.close()
    return time.perf_counter()-t,got
direct=[get(("127.0.0.1",8099),"/")[0] for _ in range(n)]
gated=[get(("127.0.0.1",3128),"http://host.sandtray.internal:%d/"%port)[0] for _ in range(n)]
d,got=get(("127.0.0.1",3128),"http://host.sandtray.internal:%d/big"%port)
print("direct %.2f gated %.2f mbs %.1f got %d"%(statistics.median(direct)*1000,statistics.median(gated)*1000,got/d/1e6,got))`

// BenchmarkEgressGate measures what the egress gate adds to a sandbox's
// connection: the median time of a small HTTP request on a new connection
// through the gate (sandbox loopback → channel → gate → the host's
// 127.0.0.1) against the same request to a server on the sandbox's own
// loopback, and MB/s of one 64 MB download through the gate. Run it with
// -benchtime=1x: each run makes 50 connections each way.
func BenchmarkEgressGate(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.Header().Set("Content-Length", fmt.Sprint(64<<20))
			for range 64 {
				w.Write(chunk)
			}
			return
		}
		w.Write([]byte("ok"))
	})}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	port := ln.Addr().(*net.TCPAddr).Port

	cfg := config.Default()
	cfg.DefaultImage = dockertest.Image(b)
	cfg.StateDir = b.TempDir()
	cfg.Pool.Size = 0
	cfg.Egress.HostPorts = []int{port}
	e, err := newEngine(context.Background(), cfg, dockertest.Client(b), Options{Labels: dockertest.Labels(b), Tick: 200 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.stopLoops(); e.kernels.CloseAll(); e.networkPart.CloseEgress() })
	ctx := context.Background()
	owner := sandbox.Owner{Session: "bench", Client: "engine-bench 1.0"}
	e.SessionStarted(owner)
	info, err := e.Create(ctx, owner, sandbox.CreateRequest{Network: sandbox.NetworkEgress}, nil)
	if err != nil {
		b.Fatal(err)
	}
	var direct, gated, mbs float64
	b.ResetTimer()
	for range b.N {
		out, err := e.ExecCommand(ctx, owner, info.ID, sandbox.CommandRequest{
			Command: fmt.Sprintf("python3 -c '%s' 50 %d %d", egressBenchPy, port, 64<<20), Timeout: 5 * time.Minute, Wait: 5 * time.Minute})
		if err != nil || !strings.HasPrefix(out.Result.Stdout, "direct") {
			b.Fatalf("%v %q %q", err, out.Result.Stdout, out.Result.Stderr)
		}
		var got int
		fmt.Sscanf(out.Result.Stdout, "direct %f gated %f mbs %f got %d", &direct, &gated, &mbs, &got)
		if got < 64<<20 {
			b.Fatalf("downloaded %d bytes: %q", got, out.Result.Stdout)
		}
	}
	b.StopTimer()
	b.ReportMetric(direct, "direct-p50-ms")
	b.ReportMetric(gated, "gated-p50-ms")
	b.ReportMetric(gated-direct, "added-p50-ms")
	b.ReportMetric(mbs, "MB/s")
}
