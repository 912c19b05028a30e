package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Ops are the figures of the operations that go through a sandbox's agent
// (commands, files, connections) rather than a kernel.
type Ops struct {
	Command   Quantiles // execute_command `true`
	Write     Quantiles // write_file of 100 bytes
	Read      Quantiles // read_file of 100 bytes
	Forward   Quantiles // a new connection to a forwarded port, from the host, reading one byte
	Loopback  Quantiles // in the sandbox: a new HTTP connection to a server on its own loopback
	Gate      Quantiles // in the sandbox: the same request through the egress gate to a host server
	GateMBps  float64   // in the sandbox: a 32 MB download through the gate
	CopyMBps  float64   // copy_from_sandbox of a 100 MB file
	CopyBytes int64
}

// gateBody is the size of the download through the gate.
const gateBody = 32 << 20

// copyBytes is the size of the file copy_from_sandbox copies.
const copyBytes = 100 << 20

// hostServer serves, on the host's loopback, "x" for / and gateBody bytes
// for /big: what a sandbox reaches through the gate (egress.host_ports).
func hostServer() (port int, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, nil, err
	}
	big := make([]byte, gateBody)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.Header().Set("Content-Length", strconv.Itoa(len(big)))
			_, _ = w.Write(big)
			return
		}
		_, _ = io.WriteString(w, "x")
	})}
	go func() { _ = srv.Serve(ln) }()
	return ln.Addr().(*net.TCPAddr).Port, func() { srv.Close() }, nil
}

// inSandboxTimer times, inside the sandbox, n new HTTP requests to a server
// on the sandbox's own loopback and n through the egress gate to the host
// server, then a download through the gate, and prints the figures as JSON.
// It uses only python3's standard library.
const inSandboxTimer = `import http.server, json, socket, socketserver, sys, threading, time
n, host = int(sys.argv[1]), sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "1"); self.end_headers(); self.wfile.write(b"x")
    def log_message(self, *a): pass
srv = socketserver.TCPServer(("127.0.0.1", 0), H); threading.Thread(target=srv.serve_forever, daemon=True).start()
def req(addr, line):
    t = time.perf_counter(); s = socket.create_connection(addr); s.sendall(line); b = b""
    while True:
        c = s.recv(65536)
        if not c: break
        b += c
    s.close()
    if b" 200 " not in b.split(b"\r\n")[0]: raise SystemExit("bad reply %r" % b[:200])
    return time.perf_counter() - t
local = [req(("127.0.0.1", srv.server_address[1]), b"GET / HTTP/1.0\r\n\r\n") for _ in range(n)]
gate = [req(("127.0.0.1", 3128), ("GET http://%s/ HTTP/1.0\r\nHost: %s\r\n\r\n" % (host, host)).encode()) for _ in range(n)]
t = time.perf_counter(); s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(("GET http://%s/big HTTP/1.0\r\nHost: %s\r\n\r\n" % (host, host)).encode()); got = 0
while True:
    c = s.recv(1 << 20)
    if not c: break
    got += len(c)
took = time.perf_counter() - t
print(json.dumps({"local": local, "gate": gate, "bytes": got, "seconds": took}))
`

// measureOps times what goes through the agent, in one sandbox of network
// "egress" of the warm stack (whose config lets host.sandtray.internal:port
// through to hostPort).
func measureOps(ctx context.Context, rep *Report, s *stack, hostPort int, progress io.Writer) error {
	c, err := dial(ctx, s.path(), "sandtray-bench-ops")
	if err != nil {
		return err
	}
	defer c.close()
	res, err := c.call(ctx, "create_sandbox", map[string]any{"network": "egress"})
	if err != nil {
		return err
	}
	id, _ := res["sandbox_id"].(string)
	defer c.deleteSandbox(context.WithoutCancel(ctx), id)
	n := rep.N
	fmt.Fprintf(progress, "execute_command true, write_file and read_file of 100 bytes, %d calls each\n", n)
	if rep.Ops.Command, err = timeCalls(ctx, n, func(ctx context.Context) error {
		_, err := c.call(ctx, "execute_command", map[string]any{"sandbox_id": id, "command": "true"})
		return err
	}); err != nil {
		return err
	}
	data := strings.Repeat("x", 100)
	if rep.Ops.Write, err = timeCalls(ctx, n, func(ctx context.Context) error {
		_, err := c.call(ctx, "write_file", map[string]any{"sandbox_id": id, "path": "bench.txt", "content": data})
		return err
	}); err != nil {
		return err
	}
	if rep.Ops.Read, err = timeCalls(ctx, n, func(ctx context.Context) error {
		_, err := c.call(ctx, "read_file", map[string]any{"sandbox_id": id, "path": "bench.txt"})
		return err
	}); err != nil {
		return err
	}
	fmt.Fprintf(progress, "new connections to a forwarded port, %d\n", n)
	if rep.Ops.Forward, err = timeForward(ctx, c, id, n); err != nil {
		return err
	}
	fmt.Fprintf(progress, "in the sandbox: %d connections on its loopback and through the gate, a %d MB download\n", n, gateBody>>20)
	if err := timeGate(ctx, c, id, n, hostPort, rep); err != nil {
		return err
	}
	fmt.Fprintf(progress, "copy_from_sandbox of %d MB\n", copyBytes>>20)
	return timeCopy(ctx, c, id, s, rep)
}

// timeForward starts a one-byte server in the sandbox, forwards its port,
// and times n new connections from the host that read its byte.
func timeForward(ctx context.Context, c *client, id string, n int) (Quantiles, error) {
	server := `import socket; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", 9100)); s.listen(128)
while True:
    k, _ = s.accept(); k.sendall(b"x"); k.close()`
	if _, err := c.call(ctx, "execute_code", map[string]any{"sandbox_id": id, "code": server, "background": true}); err != nil {
		return Quantiles{}, err
	}
	res, err := c.call(ctx, "expose_port", map[string]any{"sandbox_id": id, "port": 9100})
	if err != nil {
		return Quantiles{}, err
	}
	port := int(res["host_port"].(float64))
	one := func(ctx context.Context) error {
		conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 10*time.Second)
		if err != nil {
			return err
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		b := make([]byte, 1)
		_, err = io.ReadFull(conn, b)
		return err
	}
	for deadline := time.Now().Add(30 * time.Second); one(ctx) != nil; { // until the server listens
		if time.Now().After(deadline) {
			return Quantiles{}, fmt.Errorf("the server in the sandbox never answered through the forward")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return timeCalls(ctx, n, one)
}

// timeGate runs inSandboxTimer in the sandbox.
func timeGate(ctx context.Context, c *client, id string, n, hostPort int, rep *Report) error {
	if _, err := c.call(ctx, "write_file", map[string]any{"sandbox_id": id, "path": "/tmp/bench_gate.py", "content": inSandboxTimer}); err != nil {
		return err
	}
	res, err := c.call(ctx, "execute_command", map[string]any{"sandbox_id": id, "timeout_s": 300,
		"command": fmt.Sprintf("python3 /tmp/bench_gate.py %d host.sandtray.internal:%d", n+warmupCalls, hostPort)})
	if err != nil {
		return err
	}
	out, _ := res["stdout"].(string)
	var got struct {
		Local, Gate []float64
		Bytes       int64
		Seconds     float64
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Local) < warmupCalls {
		return fmt.Errorf("the timer in the sandbox said %q (stderr %q)", out, res["stderr"])
	}
	rep.Ops.Loopback, rep.Ops.Gate = seconds(got.Local[warmupCalls:]), seconds(got.Gate[warmupCalls:])
	if got.Seconds > 0 {
		rep.Ops.GateMBps = float64(got.Bytes) / 1e6 / got.Seconds
	}
	return nil
}

func seconds(s []float64) Quantiles {
	d := make([]time.Duration, len(s))
	for i, v := range s {
		d[i] = time.Duration(v * float64(time.Second))
	}
	return quantiles(d)
}

// timeCopy writes a file of copyBytes in the sandbox and times its copy to
// the host (into the stack's allowed folder).
func timeCopy(ctx context.Context, c *client, id string, s *stack, rep *Report) error {
	if _, err := c.call(ctx, "execute_command", map[string]any{"sandbox_id": id,
		"command": fmt.Sprintf("head -c %d /dev/urandom > /workspace/big.bin", copyBytes)}); err != nil {
		return err
	}
	dst := filepath.Join(s.copies, "big-"+randomHex())
	defer os.Remove(dst)
	start := time.Now()
	res, err := c.call(ctx, "copy_from_sandbox", map[string]any{"sandbox_id": id, "path": "big.bin", "host_path": dst})
	took := time.Since(start)
	if err != nil {
		return err
	}
	if b, _ := res["bytes"].(float64); int64(b) != copyBytes {
		return fmt.Errorf("copy_from_sandbox copied %v bytes, want %d", res["bytes"], copyBytes)
	}
	rep.Ops.CopyBytes, rep.Ops.CopyMBps = copyBytes, float64(copyBytes)/1e6/took.Seconds()
	return nil
}
