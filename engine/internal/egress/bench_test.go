package egress

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
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
