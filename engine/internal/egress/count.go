package egress

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// countConn is an upstream connection of a CONNECT tunnel that counts the
// bytes each way and reports them once, when it is closed. It keeps
// *net.TCPConn's half-closes, which goproxy passes on.
type countConn struct {
	*net.TCPConn
	up, down atomic.Int64 // written upstream (from the sandbox), read (to it)
	start    time.Time
	done     func(up, down int64, d time.Duration)
	once     sync.Once
}

func (c *countConn) Read(p []byte) (int, error) {
	n, err := c.TCPConn.Read(p)
	c.down.Add(int64(n))
	return n, err
}

func (c *countConn) Write(p []byte) (int, error) {
	n, err := c.TCPConn.Write(p)
	c.up.Add(int64(n))
	return n, err
}

// ReadFrom and WriteTo are plain copies, so io.Copy counts through Read and
// Write rather than splicing past them.
func (c *countConn) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(struct{ io.Writer }{c}, r)
}

func (c *countConn) WriteTo(w io.Writer) (int64, error) {
	return io.Copy(w, struct{ io.Reader }{c})
}

func (c *countConn) Close() error {
	err := c.TCPConn.Close()
	c.once.Do(func() { c.done(c.up.Load(), c.down.Load(), time.Since(c.start)) })
	return err
}

// countReader counts what is read through it and reports it once, when
// closed.
type countReader struct {
	io.ReadCloser
	n       atomic.Int64
	onClose func(n int64)
	once    sync.Once
}

func (r *countReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.n.Add(int64(n))
	return n, err
}

func (r *countReader) Close() error {
	err := r.ReadCloser.Close()
	if r.onClose != nil {
		r.once.Do(func() { r.onClose(r.n.Load()) })
	}
	return err
}
