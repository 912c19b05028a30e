package shim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"
)

// ErrEngineClosed is returned by Run when the engine closed the connection
// while the client was still connected (the engine quit or crashed).
var ErrEngineClosed = errors.New("the Sandtray engine closed the connection")

// pipe copies stdin to conn and conn to stdout until the engine side ends,
// then closes conn. It owns both copying goroutines:
//
//   - the receiver (conn → stdout) ends when the engine closes, when conn is
//     closed (ctx done), or when stdout fails;
//   - the sender (stdin → conn) ends at stdin EOF, after half-closing conn so
//     the engine sees EOF and can finish its replies, or when conn fails.
//
// If stdin ends first, pipe waits for the receiver: both directions are done
// when it returns. If the engine ends first, pipe closes conn (failing any
// pending write) and interrupts a Read on stdin when stdin supports read
// deadlines, waiting for the sender. A Read that cannot be interrupted (a
// blocking os.Stdin) is not waited for: the sender then exits at that Read's
// next return, touching only the closed conn, and sandtray-mcp exits first.
func pipe(ctx context.Context, conn net.Conn, stdin io.Reader, stdout io.Writer) error {
	stopOnCancel := context.AfterFunc(ctx, func() { conn.Close() })
	defer stopOnCancel()

	// finishing is set by the sender before it half-closes, so once the
	// engine has seen our EOF and closed, its end is not mistaken for the
	// engine quitting on its own; from then on the sender cannot block.
	var finishing atomic.Bool
	sent := make(chan error, 1)
	go func() { sent <- send(conn, stdin, &finishing) }()
	received := make(chan error, 1)
	go func() { received <- receive(stdout, conn) }()

	select {
	case sendErr := <-sent:
		return finish(ctx, conn, sendErr, <-received)
	case recvErr := <-received:
		if finishing.Load() {
			return finish(ctx, conn, <-sent, recvErr)
		}
		conn.Close()
		interruptAndWait(stdin, sent)
		return outcome(ctx, recvErr, nil, false)
	}
}

// finish closes conn once both directions are done and picks the result.
func finish(ctx context.Context, conn net.Conn, sendErr, recvErr error) error {
	conn.Close()
	if errors.Is(sendErr, errSocketWrite) {
		return outcome(ctx, recvErr, nil, false)
	}
	return outcome(ctx, recvErr, sendErr, true)
}

// outcome picks the error Run reports, most telling first.
func outcome(ctx context.Context, recvErr, stdinErr error, stdinEnded bool) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case recvErr != nil:
		return recvErr
	case !stdinEnded:
		return ErrEngineClosed
	case stdinErr != nil:
		return fmt.Errorf("read stdin: %w", stdinErr)
	}
	return nil
}

// errSocketWrite marks a sender that stopped because writing to the socket
// failed, not because stdin ended.
var errSocketWrite = errors.New("write to the Sandtray engine failed")

// send copies stdin to conn, then sets finishing and half-closes conn's write
// side. It returns nil at stdin EOF, the error when reading stdin fails, and
// errSocketWrite when the socket fails (the receiver reports why).
func send(conn net.Conn, stdin io.Reader, finishing *atomic.Bool) error {
	r := &trackedReader{r: stdin}
	_, copyErr := io.Copy(conn, r)
	finishing.Store(true)
	if hc, ok := conn.(interface{ CloseWrite() error }); ok {
		hc.CloseWrite() // fails only when conn is already closed, which is fine
	}
	switch {
	case r.err != nil:
		return r.err
	case copyErr != nil:
		return fmt.Errorf("%w: %w", errSocketWrite, copyErr)
	}
	return nil
}

// receive copies conn to stdout until the engine closes the connection.
func receive(stdout io.Writer, conn net.Conn) error {
	w := &trackedWriter{w: stdout}
	_, err := io.Copy(w, conn)
	if w.err != nil {
		return fmt.Errorf("write stdout: %w", w.err)
	}
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("read from the Sandtray engine: %w", err)
	}
	return nil
}

// interruptAndWait unblocks the sender's Read when stdin supports read
// deadlines, and then waits for the sender to finish.
func interruptAndWait(stdin io.Reader, sent <-chan error) {
	d, ok := stdin.(interface{ SetReadDeadline(time.Time) error })
	if ok && d.SetReadDeadline(time.Now()) == nil {
		<-sent
	}
}

// trackedReader remembers the first error other than EOF its reader returns,
// so send can tell a stdin failure from a socket failure.
type trackedReader struct {
	r   io.Reader
	err error
}

func (t *trackedReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && err != io.EOF && t.err == nil {
		t.err = err
	}
	return n, err
}

// trackedWriter remembers its writer's first error, so receive can tell a
// stdout failure from a socket failure.
type trackedWriter struct {
	w   io.Writer
	err error
}

func (t *trackedWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if err != nil && t.err == nil {
		t.err = err
	}
	return n, err
}
