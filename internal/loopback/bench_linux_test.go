package loopback

import (
	"net"
	"testing"
)

// BenchmarkPeerUID is what the check adds to each accepted connection: one
// read of the socket tables, as large as this machine's.
func BenchmarkPeerUID(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		b.Fatal(err)
	}
	defer server.Close()
	for b.Loop() {
		if _, err := PeerUID(server); err != nil {
			b.Fatal(err)
		}
	}
}
