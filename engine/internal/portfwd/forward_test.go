package portfwd

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"net"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// localOpener dials the port on this host's loopback, standing in for a
// sandbox's agent dialing the sandbox's: the forward, its relay and the
// half-closes are the real ones, only the agent is left out (its own tests,
// and the engine's, cover it).
type localOpener struct{}

func (localOpener) Open(ctx context.Context, port int) (Stream, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp4", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return nil, err
	}
	return c.(*net.TCPConn), nil
}

// server is a TCP server on the host's loopback standing for the sandbox's.
type server struct {
	ln   net.Listener
	port int
	wg   sync.WaitGroup
}

// serve answers each connection with handle until the test ends.
func serve(t *testing.T, port int, handle func(net.Conn)) *server {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	s := &server{ln: ln, port: ln.Addr().(*net.TCPAddr).Port}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				handle(c)
			}()
		}
	}()
	t.Cleanup(s.stop)
	return s
}

func (s *server) stop() { s.ln.Close(); s.wg.Wait() }

// hashAfterEOF reads until the client half-closes, then answers the
// SHA-256 of what it read: it only answers if the half-close arrived.
func hashAfterEOF(c net.Conn) {
	h := sha256.New()
	if _, err := io.Copy(h, c); err != nil {
		return
	}
	fmt.Fprintf(c, "%x", h.Sum(nil))
}

// sendBlob writes n pseudo-random bytes (the same for the same n).
func sendBlob(n int) func(net.Conn) {
	return func(c net.Conn) { _, _ = c.Write(blob(n)) }
}

var (
	blobMu    sync.Mutex
	blobCache = map[int][]byte{}
)

func blob(n int) []byte {
	blobMu.Lock()
	defer blobMu.Unlock()
	if b, ok := blobCache[n]; ok {
		return b
	}
	b := make([]byte, n)
	rand.Read(b)
	blobCache[n] = b
	return b
}

func startForward(t testing.TB, port, maxConns int) *Forward {
	t.Helper()
	f, err := Start(context.Background(), Options{Opener: localOpener{}, Port: port, MaxConns: maxConns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func dial(t testing.TB, f *Forward) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp4", "127.0.0.1:"+strconv.Itoa(f.HostPort()))
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	return c.(*net.TCPConn)
}

func TestRelayHalfCloseUpstream(t *testing.T) {
	srv := serve(t, 0, hashAfterEOF)
	f := startForward(t, srv.port, 0)
	c := dial(t, f)
	defer c.Close()
	payload := blob(8 << 20)
	go func() {
		_, _ = c.Write(payload)
		_ = c.CloseWrite()
	}()
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%x", sha256.Sum256(payload)); string(got) != want {
		t.Errorf("server answered %q, want the hash of the 8 MB sent (%s)", got, want)
	}
}

// TestRelayRequestThenResponse: the server answers only after reading the
// client's request, as HTTP servers do, with the client's side left open.
func TestRelayRequestThenResponse(t *testing.T) {
	srv := serve(t, 0, func(c net.Conn) {
		line, err := bufio.NewReader(c).ReadString('\n')
		if err == nil {
			io.WriteString(c, "you said "+line)
		}
	})
	f := startForward(t, srv.port, 0)
	c := dial(t, f)
	defer c.Close()
	io.WriteString(c, "hello\n")
	got, err := io.ReadAll(c)
	if string(got) != "you said hello\n" || err != nil {
		t.Errorf("read %q, %v; want the server's answer to the request", got, err)
	}
}

func TestRelayDownloadsConcurrently(t *testing.T) {
	const size = 4 << 20
	srv := serve(t, 0, sendBlob(size))
	f := startForward(t, srv.port, 0)
	want := sha256.Sum256(blob(size))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			c := dial(t, f)
			defer c.Close()
			hs := sha256.New()
			n, err := io.Copy(hs, c)
			if err != nil || n != size || !bytes.Equal(hs.Sum(nil), want[:]) {
				t.Errorf("download %d: %d bytes, err %v, hash match %v; want %d bytes", i, n, err, bytes.Equal(hs.Sum(nil), want[:]), size)
			}
		})
	}
	wg.Wait()
}

// unusedPort returns a loopback port nothing listens on, below Linux's
// ephemeral range: a port from that range (what Listen on :0 gives) can be
// taken meanwhile by an outgoing connection, even by the relay's own
// connect to it (a TCP self-connect), and the test's server could not
// start there.
func unusedPort(t *testing.T) int {
	t.Helper()
	for range 100 {
		port := 20000 + mathrand.IntN(12000)
		ln, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			ln.Close()
			return port
		}
	}
	t.Fatal("no unused port between 20000 and 32000")
	return 0
}

// TestRelayServerNotListeningThenRestarting: a connection to a port nothing
// listens on is closed with no data, the forward stays, and once a server
// (re)starts there the next connection reaches it.
func TestRelayServerNotListeningThenRestarting(t *testing.T) {
	port := unusedPort(t)
	f := startForward(t, port, 0)

	// The forward accepts, finds nothing to relay to and resets the
	// connection; the reset may arrive before the dial returns
	// (Go reads the socket's error once it is writable).
	c, err := net.Dial("tcp4", "127.0.0.1:"+strconv.Itoa(f.HostPort()))
	if err == nil {
		_ = c.SetDeadline(time.Now().Add(60 * time.Second))
		var got []byte
		got, err = io.ReadAll(c)
		c.Close()
		if len(got) != 0 {
			t.Fatalf("read %q from a port nothing listens on", got)
		}
	}
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("connection to a port nothing listens on: %v, want EOF or a reset", err)
	}

	for i, greeting := range []string{"first", "second"} {
		srv := serve(t, port, func(c net.Conn) { io.WriteString(c, greeting) })
		c := dial(t, f)
		got, err := io.ReadAll(c)
		c.Close()
		if string(got) != greeting || err != nil {
			t.Errorf("server start %d: read %q, %v; want %q", i+1, got, err, greeting)
		}
		srv.stop()
	}
}

func TestForwardLimitAndClose(t *testing.T) {
	release := make(chan struct{})
	srv := serve(t, 0, func(c net.Conn) { io.WriteString(c, "hi"); <-release })
	f := startForward(t, srv.port, 1)

	held := dial(t, f)
	defer held.Close()
	buf := make([]byte, 2)
	if _, err := io.ReadFull(held, buf); err != nil {
		t.Fatalf("first connection: %v", err)
	}
	extra := dial(t, f)
	if got, _ := io.ReadAll(extra); len(got) != 0 {
		t.Errorf("a connection over the limit of 1 read %q, want it closed", got)
	}
	extra.Close()

	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	close(release)
	if _, err := held.Read(buf); err == nil {
		t.Error("a relay outlived Close")
	}
	if c, err := net.Dial("tcp4", "127.0.0.1:"+strconv.Itoa(f.HostPort())); err == nil {
		c.Close()
		t.Error("the forward still accepts after Close")
	}
}

func TestStartListensOnLoopbackOnly(t *testing.T) {
	f := startForward(t, 1, 0)
	if got := f.ln.Addr().String(); got != "127.0.0.1:"+strconv.Itoa(f.HostPort()) {
		t.Errorf("listening on %s, want 127.0.0.1 only", got)
	}
	if _, err := Start(context.Background(), Options{Opener: localOpener{}, Port: 1, HostPort: f.HostPort()}); err == nil {
		t.Error("a second forward on a host port in use started")
	}
}
