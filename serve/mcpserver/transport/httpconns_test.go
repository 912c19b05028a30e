package transport

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawRequest sends one request without a token on c and reads the answer:
// the status, or 0 when the connection ended without one.
func rawRequest(c net.Conn, host string) int {
	c.SetDeadline(time.Now().Add(testTimeout))
	if _, err := io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: "+host+"\r\nContent-Length: 2\r\n\r\n{}"); err != nil {
		return 0
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestHTTPCapsConnections (F40): past HTTPOptions.MaxConns open
// connections, a new one is closed at once, unanswered; once one of the
// open ones ends, a new connection is served again.
func TestHTTPCapsConnections(t *testing.T) {
	hs := serveHTTP(t, HTTPOptions{MaxConns: 2})
	addr := strings.TrimPrefix(hs.url, "http://")
	var open []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if code := rawRequest(c, addr); code != http.StatusUnauthorized {
			t.Fatalf("a connection within the cap: %d, want 401", code)
		}
		open = append(open, c) // kept alive by the server
	}
	extra, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	if code := rawRequest(extra, addr); code != 0 {
		t.Errorf("a third connection with a cap of 2 got %d, want it closed unanswered", code)
	}
	open[0].Close()
	eventually(t, "a connection is served again after one of the two closed", func() bool {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return false
		}
		defer c.Close()
		return rawRequest(c, addr) == http.StatusUnauthorized
	})
	if code := rawRequest(open[1], addr); code != http.StatusUnauthorized {
		t.Errorf("the connection kept open: %d, want it still served", code)
	}
}
