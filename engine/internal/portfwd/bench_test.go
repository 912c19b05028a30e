package portfwd_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/internal/execgate"
	"github.com/sandtray/sandtray/engine/internal/portfwd"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/test/dockertest"
)

// sizeServer answers each connection's first line, a byte count, with that
// many bytes, then closes: a server in the sandbox that costs next to nothing.
const sizeServer = `import socket,threading
buf=b"x"*(1<<20)
def serve(c):
    f=c.makefile("rb");n=int(f.readline())
    while n>0:
        k=min(n,len(buf));c.sendall(buf[:k]);n-=k
    c.close()
s=socket.socket();s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)
s.bind(("127.0.0.1",9000));s.listen(64)
while True:
    c,_=s.accept();threading.Thread(target=serve,args=(c,),daemon=True).start()
`

// benchForward starts an offline sandbox running sizeServer and a forward
// to it through its agent, as the engine has it.
func benchForward(b *testing.B) *portfwd.Forward {
	b.Helper()
	c := execgate.New(dockertest.Client(b))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	id, err := c.Create(ctx, runtime.CreateOptions{Image: dockertest.Image(b), Labels: dockertest.Labels(b), Agent: dockertest.Agent(b),
		Network: "none", MemoryMB: 512, MilliCPUs: 2000, PidsLimit: 256})
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Start(ctx, id); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Forget(id) })
	if _, err := c.Exec(ctx, id, runtime.ExecOptions{Cmd: []string{"sh", "-c",
		"nohup python3 -c '" + sizeServer + "' >/dev/null 2>&1 &"}}); err != nil {
		b.Fatal(err)
	}
	f, err := portfwd.Start(ctx, portfwd.Options{Opener: portfwd.AgentOpener{Docker: c, ID: id}, Port: 9000})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	for deadline := time.Now().Add(30 * time.Second); ; { // until the server listens
		if _, err := get(f, 1); err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the server in the sandbox never answered")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return f
}

// get asks the server through the forward for n bytes and reads them.
func get(f *portfwd.Forward, n int) (int64, error) {
	c, err := net.Dial("tcp4", "127.0.0.1:"+strconv.Itoa(f.HostPort()))
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if _, err := fmt.Fprintf(c, "%d\n", n); err != nil {
		return 0, err
	}
	got, err := io.Copy(io.Discard, bufio.NewReaderSize(c, 256<<10))
	if err == nil && got != int64(n) {
		err = fmt.Errorf("read %d bytes, want %d", got, n)
	}
	return got, err
}

// BenchmarkForwardThroughput: one 64 MB download per op through a forward
// into an offline sandbox; MB/s is the forward's throughput.
func BenchmarkForwardThroughput(b *testing.B) {
	f := benchForward(b)
	const size = 64 << 20
	b.SetBytes(size)
	b.ResetTimer()
	for b.Loop() {
		if _, err := get(f, size); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkForwardConnection: a new connection per op that asks for one
// byte: the time per op is what a forward adds to a connection (a local
// connection to a local server costs well under a millisecond).
func BenchmarkForwardConnection(b *testing.B) {
	f := benchForward(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := get(f, 1); err != nil {
			b.Fatal(err)
		}
	}
}
