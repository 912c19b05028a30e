//go:build unix

package socket

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// DialPrivate is Dial for a client that must talk to no one but its own
// user's engine, as the shim must: before it connects, the socket's folder
// must be a real folder of the user's own that nobody else can write or
// enter (ErrInsecureDir), since anyone who can write there can put their
// own socket in its place; after, the process that listens must run as the
// user (ErrNotOwner), from the kernel's record of the listener. On either
// failure nothing has been written to the socket.
func DialPrivate(ctx context.Context, path string) (net.Conn, error) {
	if err := verifyPrivateDir(filepath.Dir(path), os.Getuid()); err != nil {
		return nil, err
	}
	conn, err := Dial(ctx, path)
	if err != nil {
		return nil, err
	}
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("%s: not a unix socket connection", path)
	}
	uid, err := peerUID(uc)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("check who serves %s: %w", path, err)
	}
	if uid != os.Getuid() {
		conn.Close()
		return nil, fmt.Errorf("%w: %s is served by uid %d, not by you (uid %d); stop that process or remove the socket",
			ErrNotOwner, path, uid, os.Getuid())
	}
	return conn, nil
}
