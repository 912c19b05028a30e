package engine

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Round 4's gate findings, tried as a model would: from inside an egress
// sandbox, through the channel, against the real gate and daemon.

// hugeConnectsPy sends n CONNECTs to 900 KB names to the gate, reading each
// answer while it writes, and prints each status.
const hugeConnectsPy = `import socket,sys,threading
n=int(sys.argv[1]);name=b"a"*900000;codes=[]
for i in range(n):
    s=socket.create_connection(("127.0.0.1",3128));s.settimeout(60)
    def send():
        try: s.sendall(b"CONNECT %d%s.test:443 HTTP/1.1\r\nHost: x\r\n\r\n"%(i,name))
        except OSError: pass
    w=threading.Thread(target=send);w.start()
    try: data=s.recv(200)
    except OSError as e: data=b""
    codes.append(data.split(b" ")[1].decode() if data.startswith(b"HTTP/") else "none")
    s.close();w.join()
print(" ".join(codes))`

// tunnelPy opens url through HTTPS_PROXY with urllib and prints what the
// client shows of a refused CONNECT.
const tunnelPy = `import sys,urllib.request
try: urllib.request.urlopen(sys.argv[1],timeout=30);print("200")
except Exception as e: print("error",e)`

func TestEgressRound4FromASandbox(t *testing.T) {
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "the host's service") }))
	t.Cleanup(svc.Close)
	port := svc.Listener.Addr().(*net.TCPAddr).Port
	te := newTestEngine(t, func(c *config.Config) {
		c.Egress.Allow = []string{"*"}
		c.Egress.Deny = []string{"example.com", "host.sandtray.internal"}
		c.Egress.HostPorts = []int{port}
	})
	info := te.create(t, sandbox.CreateRequest{Network: sandbox.NetworkEgress})
	for _, c := range []struct{ url, status, body string }{
		// F67: every way of writing a denied name is denied, or refused.
		{"http://EXAMPLE.com./", "403", `sandtray egress: example.com:80 is denied by rule deny "example.com" (config)`},
		{"http://example.com../", "400", `sandtray egress: "example.com.." is not a host name`},
		// F62: a deny of the host alias holds over egress.host_ports.
		{fmt.Sprintf("http://host.sandtray.internal:%d/", port), "403", fmt.Sprintf(`sandtray egress: host.sandtray.internal:%d is denied by rule deny "host.sandtray.internal" (config)`, port)},
		// F68: a port past 65535 is no port.
		{fmt.Sprintf("http://example.org:%d/", port+65536), "400", fmt.Sprintf(`sandtray egress: port "%d" is not a port: use one from 1 to 65535`, port+65536)},
		// A name that does not resolve says so in words.
		{"http://no-such-host.invalid/", "502", "sandtray egress: could not resolve no-such-host.invalid: no such name; check its spelling"},
	} {
		if status, body, _ := fetch(t, te, info.ID, c.url); status != c.status || !strings.HasPrefix(body, c.body) {
			t.Errorf("%s: got %s %q, want %s %q…", c.url, status, body, c.status, c.body)
		}
	}
	// A refused CONNECT: the client shows the reason, from the status line.
	out := te.command(t, info.ID, fmt.Sprintf("python3 -c '%s' https://example.com/", tunnelPy)).Stdout
	if want := `Tunnel connection failed: 403 sandtray egress: example.com:443 is denied by rule deny "example.com" (config) in the user's config`; !strings.Contains(out, want) {
		t.Errorf("urllib's error for a refused CONNECT: %q, want it to hold %q", out, want)
	}
	// F63: CONNECTs to 900 KB names are refused with 431, and the engine
	// (this process) keeps nothing of them.
	before := heapAfterGC()
	out = te.command(t, info.ID, fmt.Sprintf("python3 -c '%s' 30", hugeConnectsPy)).Stdout
	grew := int64(heapAfterGC()) - int64(before)
	if strings.TrimSpace(out) != strings.TrimSpace(strings.Repeat("431 ", 30)) || grew > 16<<20 {
		t.Errorf("30 CONNECTs to 900 KB names: %q, and the engine's heap grew by %d MiB; want 431 each, and at most 16 MiB", out, grew>>20)
	}
}

// heapAfterGC is the heap in use after a full collection.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
