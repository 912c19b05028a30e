package docker

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/moby/moby/client"
	"github.com/sandtray/sandtray/engine/runtime"
)

// stderrKept bounds what an ExecConn keeps of its process's stderr.
const stderrKept = 4 << 10

// ExecConn is a process in a container with its stdin and stdout attached as
// a byte stream: Write feeds stdin, Read returns stdout, CloseWrite closes
// stdin (the process reads EOF) while stdout keeps flowing. It carries a
// port forward's relay (see engine/internal/portfwd). Read and Write may be
// called from different goroutines; Read from one goroutine at a time.
type ExecConn struct {
	client *Client
	execID string
	conn   client.HijackedResponse

	// Read's demultiplexer state, owned by the reading goroutine.
	left int // bytes of the current stdout frame not yet read

	mu     sync.Mutex // guards stderr
	stderr []byte     // the first stderrKept bytes of stderr
}

// ExecStream starts cmd in the running container id, as user ("" for the
// container's user), with stdin, stdout and stderr attached, and returns the
// stream. It returns once the process is started; the stream then lives
// until Close or until the process ends (Read returns io.EOF), whatever
// happens to ctx. A container that is not running fails with
// sandbox.ErrConflict.
func (c *Client) ExecStream(ctx context.Context, id, user string, cmd []string) (runtime.ExecConn, error) {
	op := "exec stream in container " + id
	created, err := c.api.ExecCreate(ctx, id, client.ExecCreateOptions{
		User: user, AttachStdin: true, AttachStdout: true, AttachStderr: true, Cmd: cmd,
	})
	if err != nil {
		return nil, execError(ctx, op, err)
	}
	att, err := c.api.ExecAttach(ctx, created.ID, client.ExecAttachOptions{})
	if err != nil {
		return nil, execError(ctx, op, err)
	}
	return &ExecConn{client: c, execID: created.ID, conn: att.HijackedResponse}, nil
}

// Read returns the process's stdout; stderr is set aside for Stderr. It
// returns io.EOF once the process's output has ended.
func (s *ExecConn) Read(p []byte) (int, error) {
	for s.left == 0 {
		if err := s.nextFrame(); err != nil {
			return 0, err
		}
	}
	if len(p) > s.left {
		p = p[:s.left]
	}
	n, err := s.conn.Reader.Read(p)
	s.left -= n
	if err == io.EOF && s.left > 0 {
		err = io.ErrUnexpectedEOF
	}
	if err == io.EOF && n > 0 {
		err = nil // the next Read reports it
	}
	return n, err
}

// nextFrame reads frame headers (Docker's stdcopy framing: stream byte, three
// zero bytes, big-endian length) until one for stdout, keeping stderr frames.
func (s *ExecConn) nextFrame() error {
	var hdr [8]byte
	if _, err := io.ReadFull(s.conn.Reader, hdr[:]); err != nil {
		if err == io.ErrUnexpectedEOF {
			return fmt.Errorf("exec stream: truncated frame header: %w", err)
		}
		return err
	}
	size := int(binary.BigEndian.Uint32(hdr[4:]))
	switch hdr[0] {
	case 1: // stdout
		s.left = size
		return nil
	case 2, 3: // stderr, or the daemon's own error
		return s.keepStderr(s.conn.Reader, size)
	default:
		return fmt.Errorf("exec stream: unknown stream %d in frame header", hdr[0])
	}
}

func (s *ExecConn) keepStderr(r *bufio.Reader, size int) error {
	buf := make([]byte, size)
	if _, err := io.ReadFull(r, buf); err != nil {
		return fmt.Errorf("exec stream: truncated stderr frame: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if room := stderrKept - len(s.stderr); room > 0 {
		s.stderr = append(s.stderr, buf[:min(room, len(buf))]...)
	}
	return nil
}

// Write sends p to the process's stdin.
func (s *ExecConn) Write(p []byte) (int, error) { return s.conn.Conn.Write(p) }

// CloseWrite closes the process's stdin; its stdout keeps flowing.
func (s *ExecConn) CloseWrite() error { return s.conn.CloseWrite() }

// Close ends the stream both ways. Docker does not kill the process then; a
// process reading stdin sees EOF.
func (s *ExecConn) Close() error {
	s.conn.Close()
	return nil
}

// Started waits until Docker has started the process (it has a pid), or
// it could not, or ctx is done. ExecStream returns once the stream is
// attached, a moment before the process exists: an install's freeze counts
// a stream as starting until then (see engine/internal/execgate).
func (s *ExecConn) Started(ctx context.Context) error {
	for {
		res, err := s.client.api.ExecInspect(ctx, s.execID, client.ExecInspectOptions{})
		if err != nil {
			return execError(ctx, "exec stream start", err)
		}
		if res.PID != 0 || res.ExitCode != 0 { // started, or failed to (126, 127)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(exitPollInterval):
		}
	}
}

// Stderr returns what the process wrote to stderr so far (the first 4 KiB).
func (s *ExecConn) Stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.stderr)
}

// ExitCode waits for the process to end and returns its exit code; call it
// after Read has returned io.EOF.
func (s *ExecConn) ExitCode(ctx context.Context) (int, error) {
	code, err := s.client.exitCode(ctx, s.execID)
	if err != nil {
		return -1, execError(ctx, "exec stream exit code", err)
	}
	return code, nil
}
