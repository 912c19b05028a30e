package runtime

import (
	"bytes"
	"context"
	"io"
	"sync"
)

// Capped is a writer that keeps the first Max bytes written to it and
// discards the rest, never failing a write: what a runtime reads of a
// sandbox's process (its stderr, a stat's answer) is the sandbox's to make
// endless, so none of it is kept unbounded. Safe for a copier and a reader
// at once.
type Capped struct {
	Max int

	mu   sync.Mutex
	buf  bytes.Buffer
	over bool
}

// NewCapped returns a Capped keeping max bytes.
func NewCapped(max int) *Capped { return &Capped{Max: max} }

func (c *Capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.Max - c.buf.Len()
	if len(p) > room {
		c.over = true
	}
	if room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// Bytes is what was kept; it must not be changed.
func (c *Capped) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Bytes()
}

// String is what was kept.
func (c *Capped) String() string { return string(c.Bytes()) }

// Over reports whether more than Max bytes were written (what was kept is
// then only their start).
func (c *Capped) Over() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.over
}

// Stream runs exec in the background, its stdout the returned reader: a
// tar archive a process in a sandbox writes, streamed as it writes it (the
// caller bounds what it reads). exec's error ends the stream with that
// error. Closing the reader cancels exec's ctx and waits for exec to return.
func Stream(ctx context.Context, exec func(ctx context.Context, stdout io.Writer) error) io.ReadCloser {
	ctx, cancel := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		pw.CloseWithError(exec(ctx, pw))
	}()
	return &stream{PipeReader: pr, cancel: cancel, done: done}
}

type stream struct {
	*io.PipeReader
	cancel context.CancelFunc
	done   chan struct{}
}

func (s *stream) Close() error {
	s.cancel()
	err := s.PipeReader.Close()
	<-s.done
	return err
}
