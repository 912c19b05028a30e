package loopback

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
)

// haveIPv6 skips a test on a machine without ::1.
func haveIPv6(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	ln.Close()
}

// TestListenBindsBothLoopbackFamilies: localhost, 127.0.0.1 and ::1 each
// take the port on both families, and connections to either are accepted.
func TestListenBindsBothLoopbackFamilies(t *testing.T) {
	haveIPv6(t)
	for _, addr := range []string{"localhost:0", "127.0.0.1:0", "[::1]:0"} {
		t.Run(addr, func(t *testing.T) {
			ln, err := Listen(context.Background(), addr)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
			for _, host := range []string{"127.0.0.1", "::1"} {
				c, err := net.Dial("tcp", net.JoinHostPort(host, port))
				if err != nil {
					t.Fatalf("dial %s: %v", host, err)
				}
				s, err := ln.Accept()
				if err != nil {
					t.Fatal(err)
				}
				if s.RemoteAddr().String() != c.LocalAddr().String() {
					t.Errorf("accepted %s, dialled from %s", s.RemoteAddr(), c.LocalAddr())
				}
				s.Close()
				c.Close()
			}
		})
	}
}

// TestListenRefusesWhenTheOtherFamilyIsTaken: a program holding the port on
// the other loopback family stops Listen with an error naming both halves,
// and nothing stays bound.
func TestListenRefusesWhenTheOtherFamilyIsTaken(t *testing.T) {
	haveIPv6(t)
	for _, c := range []struct{ squat, listen string }{
		{"[::1]", "localhost"},
		{"[::1]", "127.0.0.1"},
		{"127.0.0.1", "[::1]"},
	} {
		t.Run(c.listen, func(t *testing.T) {
			squatter, err := net.Listen("tcp", c.squat+":0")
			if err != nil {
				t.Fatal(err)
			}
			defer squatter.Close()
			port := strconv.Itoa(squatter.Addr().(*net.TCPAddr).Port)
			ln, err := Listen(context.Background(), c.listen+":"+port)
			if err == nil {
				ln.Close()
				t.Fatalf("Listen(%s:%s) succeeded while %s held the port", c.listen, port, c.squat)
			}
			if !errors.Is(err, ErrOtherFamilyTaken) {
				t.Errorf("error %v, want ErrOtherFamilyTaken", err)
			}
			// The half Listen bound first was let go.
			first := "127.0.0.1"
			if c.listen == "[::1]" {
				first = "[::1]"
			}
			again, err := net.Listen("tcp", first+":"+port)
			if err != nil {
				t.Errorf("%s:%s still bound after the refusal: %v", first, port, err)
			} else {
				again.Close()
			}
		})
	}
}

// TestListenElsewhereIsPlain: a host that is not loopback is listened on
// as asked (here every interface; the HTTPS endpoint does that).
func TestListenElsewhereIsPlain(t *testing.T) {
	ln, err := Listen(context.Background(), "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, ok := ln.(*merged); ok {
		t.Error("0.0.0.0 got two listeners")
	}
}

// TestMergedCloseEndsAccept: Close unblocks a waiting Accept and stops both
// accept goroutines.
func TestMergedCloseEndsAccept(t *testing.T) {
	haveIPv6(t)
	ln, err := Listen(context.Background(), "localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := ln.Accept(); done <- err }()
	ln.Close() // waits for the accept goroutines
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
	}
}
