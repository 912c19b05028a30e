package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkGateConnection is the gate alone (no channel, no Docker): one
// CONNECT tunnel per iteration, from a connection handed over by
// ServeConn to a local server that answers one byte. It reports the median.
func BenchmarkGateConnection(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { c.Write([]byte{1}); c.Close() }()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	g, err := New(Options{Allow: []string{fmt.Sprintf("bench.test:%d", port)}, Resolver: newResolver(map[string][]string{"bench.test": {"127.0.0.1"}})})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	g.Register(Sandbox{ID: "b", Name: "bench"})
	req := fmt.Sprintf("CONNECT bench.test:%d HTTP/1.1\r\nHost: bench.test\r\n\r\n", port)
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		mine, theirs := net.Pipe()
		g.ServeConn("b", pipeStream{theirs})
		io.WriteString(mine, req)
		r := bufio.NewReader(mine)
		resp, err := http.ReadResponse(r, nil)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("%v %v", resp, err)
		}
		if _, err := r.ReadByte(); err != nil {
			b.Fatal(err)
		}
		mine.Close()
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
}

// BenchmarkGateThroughput is the gate alone: MB/s of a CONNECT tunnel
// carrying 64 MiB from a local server.
func BenchmarkGateThroughput(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	chunk := make([]byte, 1<<20)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				for range 64 {
					c.Write(chunk)
				}
				c.Close()
			}()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	g, _ := New(Options{Allow: []string{fmt.Sprintf("bench.test:%d", port)}, Resolver: newResolver(map[string][]string{"bench.test": {"127.0.0.1"}})})
	defer g.Close()
	g.Register(Sandbox{ID: "b", Name: "bench"})
	b.SetBytes(64 << 20)
	b.ResetTimer()
	for range b.N {
		mine, theirs := net.Pipe()
		g.ServeConn("b", pipeStream{theirs})
		fmt.Fprintf(mine, "CONNECT bench.test:%d HTTP/1.1\r\nHost: bench.test\r\n\r\n", port)
		r := bufio.NewReaderSize(mine, 1<<20)
		if resp, err := http.ReadResponse(r, nil); err != nil || resp.StatusCode != 200 {
			b.Fatalf("%v %v", resp, err)
		}
		n, _ := io.Copy(io.Discard, r)
		if n != 64<<20 {
			b.Fatalf("got %d bytes", n)
		}
		mine.Close()
	}
}

// BenchmarkGateSecretRequest is the gate alone on a bound host's path: one
// HTTPS request per iteration on a kept-alive connection whose TLS the gate
// terminates, with a placeholder swapped into its Authorization header and
// a 1 MiB answer scrubbed on its way back. It reports the median and MB/s
// of the scrubbed answers.
func BenchmarkGateSecretRequest(b *testing.B) {
	page := []byte(strings.Repeat("lorem ipsum dolor sit amet, consectetur adipiscing elit 0123456789 ", (1<<20)/40+1)[:1<<20])
	cert := leafFor(b, upstreamCA(b), "api.test")
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(page)))
		w.Write(page)
	}))
	s.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	s.StartTLS()
	defer s.Close()
	port := s.Listener.Addr().(*net.TCPAddr).Port
	ca, err := LoadOrCreateCA(b.TempDir(), []string{"api.test"})
	if err != nil {
		b.Fatal(err)
	}
	upRoots := x509.NewCertPool()
	upRoots.AddCert(upstreamCA(b).Cert.Leaf)
	g, err := New(Options{
		Allow:   []string{fmt.Sprintf("api.test:%d", port)},
		Secrets: []Secret{{Name: "API_KEY", Hosts: []string{fmt.Sprintf("api.test:%d", port)}, Value: testValue}},
		CA:      ca, UpstreamRoots: upRoots, Resolver: newResolver(map[string][]string{"api.test": {"127.0.0.1"}}),
	})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	ph := NewPlaceholder(len(testValue))
	g.Register(Sandbox{ID: "b", Name: "bench", Placeholders: map[string]string{"API_KEY": ph}})
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.PEM)
	c := &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyURL(mustURL("http://127.0.0.1:3128")),
		DialContext: func(context.Context, string, string) (net.Conn, error) {
			mine, theirs := net.Pipe()
			g.ServeConn("b", pipeStream{theirs})
			return mine, nil
		},
		TLSClientConfig: &tls.Config{RootCAs: pool},
	}}
	defer c.CloseIdleConnections()
	url := fmt.Sprintf("https://api.test:%d/v1", port)
	times := make([]time.Duration, 0, b.N)
	b.SetBytes(int64(len(page)))
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", "Bearer "+ph)
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || n != int64(len(page)) {
			b.Fatalf("got %d with %d bytes", resp.StatusCode, n)
		}
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
}
