package loopback

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
)

// ErrOtherFamilyTaken is Listen's error when the port is free on the
// address asked for but another program holds it on the other loopback
// family (wrapped with both addresses).
var ErrOtherFamilyTaken = errors.New("the port is taken on the other loopback address")

// Listen listens for TCP on addr (host:port; port 0 picks a free one). A
// loopback host (localhost, 127.0.0.0/8, ::1) is bound on both loopback
// families with the same port: the address asked for (127.0.0.1 for
// localhost) and the other family's (::1, or 127.0.0.1 for ::1). Otherwise
// another user could bind the other half of the port, and a client whose
// "localhost" resolves to it would send that user what it meant for us. When
// the other half is in use, Listen fails with ErrOtherFamilyTaken (a free
// port is tried again, up to 16 times); when this machine has no such
// family (IPv6 off), nobody can bind it either and one listener is enough.
// Any other host is listened on as net.Listen does.
func Listen(ctx context.Context, addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	first, second, ok := loopbackPair(host)
	var lc net.ListenConfig
	if !ok {
		return lc.Listen(ctx, "tcp", addr)
	}
	tries := 1
	if port == "0" {
		tries = 16
	}
	for range tries {
		a, err := lc.Listen(ctx, family(first), net.JoinHostPort(first, port))
		if err != nil {
			return nil, err
		}
		bound := strconv.Itoa(a.Addr().(*net.TCPAddr).Port)
		b, err := lc.Listen(ctx, family(second), net.JoinHostPort(second, bound))
		switch {
		case err == nil:
			return merge(a, b), nil
		case familyAbsent(err):
			return a, nil
		}
		a.Close()
		if !addrInUse(err) {
			return nil, err
		}
		if port != "0" {
			return nil, fmt.Errorf("%w: %s is free but %s is in use by another program, which a client whose localhost means %s would reach instead: %w",
				ErrOtherFamilyTaken, net.JoinHostPort(first, port), net.JoinHostPort(second, port), second, err)
		}
	}
	return nil, fmt.Errorf("%w: no free port on both %s and %s after 16 tries", ErrOtherFamilyTaken, first, second)
}

// loopbackPair returns the two loopback addresses to bind for host, the one
// asked for first; ok is false for a host that is not loopback.
func loopbackPair(host string) (first, second string, ok bool) {
	if host == "localhost" {
		return "127.0.0.1", "::1", true
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil || !ip.IsLoopback():
		return "", "", false
	case ip.To4() != nil:
		return ip.String(), "::1", true
	}
	return "::1", "127.0.0.1", true
}

func family(ip string) string {
	if net.ParseIP(ip).To4() != nil {
		return "tcp4"
	}
	return "tcp6"
}

// merge serves two listeners as one: Accept returns the next connection
// either has, Close closes both, and Addr is the first's.
func merge(a, b net.Listener) net.Listener {
	m := &merged{lns: []net.Listener{a, b}, conns: make(chan accepted), done: make(chan struct{})}
	for _, ln := range m.lns {
		m.wg.Go(func() { m.acceptFrom(ln) })
	}
	return m
}

type merged struct {
	lns       []net.Listener
	conns     chan accepted
	done      chan struct{} // closed by Close
	closeOnce sync.Once
	wg        sync.WaitGroup // the accept goroutines; Close waits for them
}

type accepted struct {
	c   net.Conn
	err error
}

// acceptFrom hands ln's connections to Accept until ln fails for good or
// the listener closes. A temporary error is passed on and accepting goes on,
// as http.Server expects of one listener.
func (m *merged) acceptFrom(ln net.Listener) {
	for {
		c, err := ln.Accept()
		select {
		case m.conns <- accepted{c, err}:
		case <-m.done:
			if c != nil {
				c.Close()
			}
			return
		}
		var ne net.Error
		if err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
			return
		}
	}
}

func (m *merged) Accept() (net.Conn, error) {
	select {
	case a := <-m.conns:
		return a.c, a.err
	case <-m.done:
		return nil, net.ErrClosed
	}
}

func (m *merged) Close() error {
	var err error
	m.closeOnce.Do(func() {
		close(m.done)
		for _, ln := range m.lns {
			err = errors.Join(err, ln.Close())
		}
	})
	m.wg.Wait()
	return err
}

func (m *merged) Addr() net.Addr { return m.lns[0].Addr() }
