package portfwd

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/loopback/loopbacktest"
)

// TestHostRangePolicy (F39): a host_port outside ports.host_range is a
// tool error naming the range and the key; one inside it passes; a saved
// forward outside the range comes back on a free port instead.
func TestHostRangePolicy(t *testing.T) {
	p := NewPorts(Policy{MaxPerSandbox: 2, MaxConns: 4, HostRange: HostRange{49152, 65535}}, nil, nil, slog.New(slog.DiscardHandler))
	for _, hostPort := range []int{1024, 3000, 8080, 49151} {
		err := p.Check(8000, hostPort)
		if !errors.Is(err, sandbox.ErrForbidden) || !strings.Contains(err.Error(), `ports.host_range = "49152-65535"`) ||
			!strings.Contains(err.Error(), "from 49152 to 65535") {
			t.Errorf("Check(8000, %d) = %v, want a refusal naming ports.host_range and the range", hostPort, err)
		}
	}
	for _, hostPort := range []int{0, 49152, 50000, 65535} {
		if err := p.Check(8000, hostPort); err != nil {
			t.Errorf("Check(8000, %d) = %v", hostPort, err)
		}
	}
	if got := p.restorable(8080); got != 0 {
		t.Errorf("a saved forward on 8080 comes back asking for %d, want a free port (0)", got)
	}
	if got := p.restorable(50000); got != 50000 {
		t.Errorf("a saved forward on 50000 comes back asking for %d, want 50000", got)
	}
}

// freeRun finds n consecutive free loopback ports and holds all but the
// last; the returned function lets them go.
func freeRun(t *testing.T, n int) (first int, free func()) {
	t.Helper()
	for range 50 {
		first = 50000 + rand.IntN(10000)
		var held []net.Listener
		ok := true
		for i := range n {
			ln, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(first+i))
			if err != nil {
				ok = false
				break
			}
			held = append(held, ln)
		}
		if ok {
			held[n-1].Close()
			return first, func() {
				for _, ln := range held[:n-1] {
					ln.Close()
				}
			}
		}
		for _, ln := range held {
			ln.Close()
		}
	}
	t.Fatal("no run of free ports found")
	return 0, nil
}

// TestStartPicksAFreeHostPortInTheRange: without a host_port, the forward
// listens on a free port of the range, and with none free it says so.
func TestStartPicksAFreeHostPortInTheRange(t *testing.T) {
	first, free := freeRun(t, 3)
	defer free()
	r := HostRange{first, first + 2}
	f, err := Start(context.Background(), Options{Opener: localOpener{}, Port: 1, HostRange: r})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.HostPort() != first+2 {
		t.Errorf("listening on %d, want %d, the only free port of %s", f.HostPort(), first+2, r)
	}
	_, err = Start(context.Background(), Options{Opener: localOpener{}, Port: 1, HostRange: r})
	if err == nil || !strings.Contains(err.Error(), "ports.host_range") {
		t.Errorf("with the range full: %v, want an error naming ports.host_range", err)
	}
}

// TestForwardRefusesAnotherUser (F36): on Linux a forward's host port
// serves the user whose assistant opened it; another local user's
// connection is closed before it reaches the sandbox, while the user's own
// connections go through.
func TestForwardRefusesAnotherUser(t *testing.T) {
	if !loopbacktest.Available() {
		t.Skip(loopbacktest.ErrCannot)
	}
	srv := serve(t, 0, func(c net.Conn) { io.WriteString(c, "hi") })
	f := startForward(t, srv.port, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	foreign, err := loopbacktest.DialAs(ctx, loopbacktest.Nobody, "tcp4", "127.0.0.1:"+strconv.Itoa(f.HostPort()))
	if err != nil {
		t.Fatal(err)
	}
	defer foreign.Close()
	foreign.SetDeadline(time.Now().Add(60 * time.Second))
	if got, err := io.ReadAll(foreign); len(got) != 0 || err != nil {
		t.Errorf("another user's connection read %q, %v; want it closed before the sandbox", got, err)
	}
	own := dial(t, f)
	defer own.Close()
	if got, err := io.ReadAll(own); string(got) != "hi" {
		t.Errorf("the user's own connection read %q, %v; want the server's hi", got, err)
	}
}
