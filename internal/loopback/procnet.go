// Package loopback guards TCP ports on this machine's loopback against the
// machine's other users: Listen binds a loopback port on both address
// families, so nobody can take the half a client's "localhost" may resolve
// to, and OwnUser refuses connections whose other end is another user's
// socket. Linux tells whose a socket is in /proc/net/tcp and tcp6; on other
// systems PeerUID returns ErrNotChecked and OwnUser lets connections through
// (what a port's users are told in docs/security.md).
package loopback

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNotChecked is PeerUID's answer where the system gives no way to learn
// the owner of a TCP socket (every system but Linux here).
var ErrNotChecked = errors.New("the peer's user is not checked on this system")

// ErrNoPeer means the other end of a connection is not a live socket of
// this machine's network namespace: it closed already, or it is remote.
var ErrNoPeer = errors.New("no live local socket at the other end")

// socketEntry is one row of /proc/net/tcp or tcp6.
type socketEntry struct {
	local, remote netip.AddrPort // IPv4-mapped IPv6 addresses unmapped
	uid           int
	inode         uint64 // 0: no socket owns the row any more (TIME_WAIT, orphaned)
}

// findSocket scans a /proc/net/tcp or tcp6 table for the socket whose local
// and remote addresses are the ones given, and returns its owner's uid.
// order is the byte order the kernel printed addresses in (the machine's
// own; fixtures from other machines pass theirs). A row whose socket is gone
// (inode 0) is not an owner: when it is the only match, ErrNoPeer.
func findSocket(r io.Reader, order binary.ByteOrder, local, remote netip.AddrPort) (int, error) {
	local, remote = unmap(local), unmap(remote)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 512), 64<<10)
	first := true
	for sc.Scan() {
		if first { // the header
			first = false
			continue
		}
		e, err := parseEntry(sc.Text(), order)
		if err != nil {
			return -1, err
		}
		if e.local == local && e.remote == remote && e.inode != 0 {
			return e.uid, nil
		}
	}
	if err := sc.Err(); err != nil {
		return -1, fmt.Errorf("read the socket table: %w", err)
	}
	return -1, fmt.Errorf("%w: %s → %s", ErrNoPeer, local, remote)
}

// parseEntry reads one row:
//
//	sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode …
func parseEntry(line string, order binary.ByteOrder) (socketEntry, error) {
	f := strings.Fields(line)
	if len(f) < 10 {
		return socketEntry{}, fmt.Errorf("socket table row %q: too few fields", line)
	}
	local, err := parseAddrPort(f[1], order)
	if err != nil {
		return socketEntry{}, err
	}
	remote, err := parseAddrPort(f[2], order)
	if err != nil {
		return socketEntry{}, err
	}
	uid, err := strconv.Atoi(f[7])
	if err != nil {
		return socketEntry{}, fmt.Errorf("socket table row %q: uid: %w", line, err)
	}
	inode, err := strconv.ParseUint(f[9], 10, 64)
	if err != nil {
		return socketEntry{}, fmt.Errorf("socket table row %q: inode: %w", line, err)
	}
	return socketEntry{local: local, remote: remote, uid: uid, inode: inode}, nil
}

// parseAddrPort reads "0100007F:1F90" (IPv4) or 32 hex digits and a port
// (IPv6). The kernel prints each 32-bit word of the address as a number in
// the machine's byte order, and the port as a number.
func parseAddrPort(s string, order binary.ByteOrder) (netip.AddrPort, error) {
	hexAddr, hexPort, ok := strings.Cut(s, ":")
	raw, err := hex.DecodeString(hexAddr)
	if !ok || err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("socket table address %q is not hex address:port", s)
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("socket table address %q: port: %w", s, err)
	}
	// raw holds each word as printed (most significant byte first); put
	// every word back in the order the kernel held it.
	for i := 0; i < len(raw); i += 4 {
		order.PutUint32(raw[i:i+4], binary.BigEndian.Uint32(raw[i:i+4]))
	}
	addr, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(addr.Unmap(), uint16(port)), nil
}

// lookup finds the socket bound at peerLocal and connected to peerRemote in
// dir's tcp and tcp6 tables, printed in the given byte order. An
// IPv4 peer may be an IPv6 socket connected to a v4-mapped address, so IPv4
// looks in both tables.
func lookup(dir string, order binary.ByteOrder, peerLocal, peerRemote netip.AddrPort) (int, error) {
	tables := []string{"tcp6"}
	if peerLocal.Addr().Unmap().Is4() {
		tables = []string{"tcp", "tcp6"}
	}
	var last error
	for _, name := range tables {
		f, err := os.Open(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) { // tcp6 is missing when IPv6 is off
			continue
		}
		if err != nil {
			return -1, fmt.Errorf("find the peer's user: %w", err)
		}
		uid, err := findSocket(f, order, peerLocal, peerRemote)
		f.Close()
		if err == nil {
			return uid, nil
		}
		if !errors.Is(err, ErrNoPeer) {
			return -1, fmt.Errorf("find the peer's user in %s: %w", f.Name(), err)
		}
		last = err
	}
	if last == nil {
		last = fmt.Errorf("%w: %s → %s (no socket table)", ErrNoPeer, peerLocal, peerRemote)
	}
	return -1, last
}

func unmap(ap netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}
