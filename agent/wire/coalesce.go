package wire

import (
	"encoding/binary"
	"io"
)

// yamux writes a data frame's 12-byte header and its body with two writes.
// Between the engine and the agent every write crosses the runtime's stream
// as a piece of its own (Docker's attach: the shim, containerd's pipe,
// dockerd, each woken once per piece), so a small frame would pay that
// journey twice. coalesced holds a data frame's header back and writes it
// with the body that follows it, as one write.
const (
	yamuxHeaderLen = 12
	yamuxTypeData  = 0
	// coalesceMax is the largest body written together with its header;
	// a longer one is sent as yamux sends it (the extra write is small
	// beside it), so the buffer never grows beyond this.
	coalesceMax = 64 << 10
)

// coalesced is a session's connection whose writes come from yamux's one
// sending goroutine: a data header is kept until its body's write.
type coalesced struct {
	io.ReadWriteCloser
	buf  []byte // the held header, then its body: reused
	held bool
}

func coalesce(conn io.ReadWriteCloser) *coalesced {
	return &coalesced{ReadWriteCloser: conn, buf: make([]byte, 0, yamuxHeaderLen+coalesceMax)}
}

func (c *coalesced) Write(p []byte) (int, error) {
	if c.held {
		c.held = false
		if len(p) <= coalesceMax {
			c.buf = append(c.buf, p...)
			_, err := c.ReadWriteCloser.Write(c.buf)
			c.buf = c.buf[:0]
			return len(p), err
		}
		_, err := c.ReadWriteCloser.Write(c.buf)
		c.buf = c.buf[:0]
		if err != nil {
			return 0, err
		}
		return c.ReadWriteCloser.Write(p)
	}
	if len(p) == yamuxHeaderLen && p[1] == yamuxTypeData && binary.BigEndian.Uint32(p[8:]) > 0 {
		c.buf = append(c.buf[:0], p...)
		c.held = true
		return len(p), nil
	}
	return c.ReadWriteCloser.Write(p)
}
