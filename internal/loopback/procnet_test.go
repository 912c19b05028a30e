package loopback

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// The tables in testdata/proc-net were read from a little-endian Linux
// machine (x86-64) with these connections open, each socket made under the
// file-system uid named (setfsuid), the listeners and accepted sockets
// under 1000:
//
//	127.0.0.1:44596 → 127.0.0.1:35623   a client of uid 1000 (IPv4)
//	[::1]:56684 → [::1]:38407           a client of uid 1001 (IPv6)
//	127.0.0.1:44604 → 127.0.0.1:35623   a client of uid 1001: an IPv6 socket
//	                                    connected to ::ffff:127.0.0.1 (in tcp6)
//	127.0.0.1:44616 → 127.0.0.1:35623   a client of uid 1001 that closed
//	                                    (TIME_WAIT: no inode, uid 0)
func TestLookupFindsThePeersUser(t *testing.T) {
	ap := netip.MustParseAddrPort
	cases := []struct {
		name          string
		local, remote string // the peer's socket: its own address, then ours
		uid           int
		err           error
	}{
		{"IPv4 client of the same user", "127.0.0.1:44596", "127.0.0.1:35623", 1000, nil},
		{"IPv6 client of another user", "[::1]:56684", "[::1]:38407", 1001, nil},
		{"the IPv6 server side is not the client", "[::1]:38407", "[::1]:56684", 1000, nil},
		{"IPv6 socket on a v4-mapped address", "127.0.0.1:44604", "127.0.0.1:35623", 1001, nil},
		{"v4-mapped form asked", "[::ffff:127.0.0.1]:44604", "[::ffff:127.0.0.1]:35623", 1001, nil},
		{"closed client: only a TIME_WAIT row", "127.0.0.1:44616", "127.0.0.1:35623", -1, ErrNoPeer},
		{"no such socket", "127.0.0.1:1", "127.0.0.1:35623", -1, ErrNoPeer},
		{"ports swapped within one address", "[::1]:38407", "[::1]:1", -1, ErrNoPeer},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			uid, err := lookup("testdata/proc-net", binary.LittleEndian, ap(c.local), ap(c.remote))
			if uid != c.uid || !errors.Is(err, c.err) {
				t.Errorf("lookup(%s → %s) = %d, %v; want %d, %v", c.local, c.remote, uid, err, c.uid, c.err)
			}
		})
	}
}

// TestLookupWithoutIPv6: a machine with IPv6 off has no tcp6 table; IPv4
// peers are still found, IPv6 ones are not.
func TestLookupWithoutIPv6(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, "testdata/proc-net/tcp", dir+"/tcp")
	if uid, err := lookup(dir, binary.LittleEndian, netip.MustParseAddrPort("127.0.0.1:44596"), netip.MustParseAddrPort("127.0.0.1:35623")); uid != 1000 || err != nil {
		t.Errorf("IPv4 peer without tcp6: %d, %v", uid, err)
	}
	if _, err := lookup(dir, binary.LittleEndian, netip.MustParseAddrPort("[::1]:56684"), netip.MustParseAddrPort("[::1]:38407")); !errors.Is(err, ErrNoPeer) {
		t.Errorf("IPv6 peer without tcp6: %v, want ErrNoPeer", err)
	}
}

// TestFindSocketRefusesMalformedTables: a table it cannot read is an error,
// never a guess (the caller then refuses the connection).
func TestFindSocketRefusesMalformedTables(t *testing.T) {
	header := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	want := netip.MustParseAddrPort("127.0.0.1:44596")
	for _, row := range []string{
		"   0: 0100007F:AE34 0100007F:8B27 01\n",
		"   0: 0100007G:AE34 0100007F:8B27 01 00000000:00000000 00:00000000 00000000  1000        0 87277 2\n",
		"   0: 0100007F:AE34 0100007F:8B27 01 00000000:00000000 00:00000000 00000000  uid        0 87277 2\n",
		"   0: 01000:AE34 0100007F:8B27 01 00000000:00000000 00:00000000 00000000  1000        0 87277 2\n",
		"   0: 0100007F:AE34 0100007F:8B27 01 00000000:00000000 00:00000000 00000000  1000        0 -1 2\n",
	} {
		if uid, err := findSocket(strings.NewReader(header+row), binary.LittleEndian, want, netip.MustParseAddrPort("127.0.0.1:35623")); err == nil || errors.Is(err, ErrNoPeer) {
			t.Errorf("row %q: %d, %v; want a parse error", row, uid, err)
		}
	}
}

// TestParseAddrPortByteOrder: the same address printed by a big-endian
// kernel reads the same.
func TestParseAddrPortByteOrder(t *testing.T) {
	for _, c := range []struct {
		text  string
		order binary.ByteOrder
		want  string
	}{
		{"0100007F:8B27", binary.LittleEndian, "127.0.0.1:35623"},
		{"7F000001:8B27", binary.BigEndian, "127.0.0.1:35623"},
		{"00000000000000000000000001000000:9607", binary.LittleEndian, "[::1]:38407"},
		{"00000000000000000000000000000001:9607", binary.BigEndian, "[::1]:38407"},
		{"B80D0120000000000000000001000000:0050", binary.LittleEndian, "[2001:db8::1]:80"},
	} {
		got, err := parseAddrPort(c.text, c.order)
		if err != nil || got.String() != c.want {
			t.Errorf("parseAddrPort(%s) = %v, %v; want %s", c.text, got, err, c.want)
		}
	}
}
