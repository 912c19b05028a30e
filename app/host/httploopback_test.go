package host

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/internal/loopback/loopbacktest"
	"github.com/sandtray/sandtray/serve/mcpserver"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"loopback","version":"1"}}}`

// serveWeb serves web on an MCP server without an engine until the test ends.
func serveWeb(t *testing.T, web *httpEndpoint) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- web.serve(ctx, mcpserver.New(nil, mcpserver.Options{}), slog.New(slog.DiscardHandler))
	}()
	t.Cleanup(func() {
		cancel()
		<-served
	})
}

// TestHTTPOnLoopbackIsOursAlone (F36): `localhost` is served on both
// loopback families, so a client whose localhost means ::1 reaches Sandtray
// and not whoever bound [::1] first; a port whose other half another program
// holds stops start-up; and, on Linux, another user's connection carrying
// the right token gets no answer at all.
func TestHTTPOnLoopbackIsOursAlone(t *testing.T) {
	if ln, err := net.Listen("tcp6", "[::1]:0"); err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	} else {
		ln.Close()
	}
	tokenPath := filepath.Join(t.TempDir(), "http-token")
	web, err := listenHTTP(config.HTTP{Listen: "localhost:0"}, tokenPath, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(web.url, "http://127.0.0.1:") {
		t.Errorf("the URL clients are given is %s, want 127.0.0.1 rather than localhost", web.url)
	}
	serveWeb(t, web)
	token, err := web.tokens.Current()
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(web.ln.Addr().(*net.TCPAddr).Port)
	for _, host := range []string{"127.0.0.1", "[::1]", "localhost"} {
		req, _ := http.NewRequest(http.MethodPost, "http://"+host+":"+port+mcpserver.PathStreamable, strings.NewReader(initializeBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d, want 200", host, resp.StatusCode)
		}
	}

	// Another program on [::1]:P: Sandtray will not take 127.0.0.1:P alone.
	squatter, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Fatal(err)
	}
	defer squatter.Close()
	taken := strconv.Itoa(squatter.Addr().(*net.TCPAddr).Port)
	for _, host := range []string{"localhost", "127.0.0.1"} {
		if web, err := listenHTTP(config.HTTP{Listen: host + ":" + taken}, tokenPath, slog.New(slog.DiscardHandler)); err == nil {
			web.ln.Close()
			t.Errorf("%s:%s was served while another program held [::1]:%s", host, taken, taken)
		} else if !strings.Contains(err.Error(), "[::1]:"+taken) || !strings.Contains(err.Error(), "choose another port") {
			t.Errorf("refusal %q does not name the taken half and the fix", err)
		}
	}

	if !loopbacktest.Available() {
		t.Log("another user's connection not tried:", loopbacktest.ErrCannot)
		return
	}
	for _, host := range []string{"127.0.0.1", "::1"} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := loopbacktest.DialAs(ctx, loopbacktest.Nobody, "tcp", net.JoinHostPort(host, port))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(30 * time.Second))
		req := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nAuthorization: Bearer " + token +
			"\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(initializeBody)) + "\r\n\r\n" + initializeBody
		_, _ = io.WriteString(c, req) // may fail: the listener may have closed it already
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil {
			resp.Body.Close()
			t.Errorf("another user's connection to %s got HTTP %d; want it closed unanswered", host, resp.StatusCode)
		} else if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("another user's connection to %s was held open, not closed", host)
		}
	}
}
