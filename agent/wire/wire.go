// Package wire is the protocol between the engine and sandtray-agent, the
// small program that runs inside every sandbox (package agent). One yamux
// session runs over the sandbox's one stream (its PID 1's attachment, or a
// long-lived exec); each operation is a stream of its own, opened with a
// request frame and answered with a reply frame, then the operation's body:
// frames for a process, raw bytes for a file, a tar or a connection.
//
// Both ends are built from this package, so they always agree on it; but
// the agent runs where the model's code runs, so the engine trusts nothing
// it reads beyond the sandbox it came from: every frame is bounded
// (ReadFrame's max, the session's stream window), every body is read to a
// limit the engine chose, and a protocol error closes only that session.
package wire

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/yamux"
)

// Version is the protocol's version, exchanged in the hello.
const Version = 1

// Limits of what one end reads from the other.
const (
	// MaxRequest bounds a request frame (the engine's; argv and env).
	MaxRequest = 4 << 20
	// MaxReply bounds a reply frame and every frame the engine reads from
	// a process stream.
	MaxReply = 64 << 10
	// Chunk is the most a data frame carries: the agent reads a process's
	// output in pieces of at most this, and the engine its stdin.
	Chunk = 32 << 10
	// MaxStreams bounds the streams the agent may open towards the engine
	// at once (a listener's connections): past it, new ones are refused.
	MaxStreams = 512
)

// Frame kinds. A frame is a kind byte, a 4-byte big-endian length and the
// payload.
const (
	KindRequest = 'Q' // opener → peer: a Request, JSON
	KindReply   = 'A' // peer → opener: a Reply, JSON
	KindStdin   = 'I' // engine → process: stdin bytes
	KindEOF     = 'C' // engine → process: stdin ends
	KindSignal  = 'S' // engine → process: a Signal, JSON
	KindStdout  = 'O' // process → engine: stdout bytes
	KindStderr  = 'E' // process → engine: stderr bytes
	KindExit    = 'X' // process → engine: an Exit, JSON, the stream's last frame
)

const headerLen = 5

// ErrProtocol is a peer that broke the protocol: a frame over its bound,
// one of a kind not due, a payload that does not decode. Nothing it sends
// after that is read.
var ErrProtocol = errors.New("protocol error")

// ErrFrameTooLarge is a frame whose length is over the reader's limit.
var ErrFrameTooLarge = fmt.Errorf("frame over the limit: %w", ErrProtocol)

// AppendFrame appends one frame to dst.
func AppendFrame(dst []byte, kind byte, payload []byte) []byte {
	dst = append(dst, kind, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(dst[len(dst)-4:], uint32(len(payload)))
	return append(dst, payload...)
}

// WriteFrame writes one frame in one Write.
func WriteFrame(w io.Writer, kind byte, payload []byte) error {
	_, err := w.Write(AppendFrame(make([]byte, 0, headerLen+len(payload)), kind, payload))
	return err
}

// WriteJSON writes v as one frame of kind.
func WriteJSON(w io.Writer, kind byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return WriteFrame(w, kind, b)
}

// ReadFrame reads one frame whose payload is at most max bytes; buf is
// reused for the payload when it is large enough. A longer frame is
// refused before any of it is read.
func ReadFrame(r io.Reader, max int, buf []byte) (kind byte, payload []byte, err error) {
	var hdr [headerLen]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if int64(n) > int64(max) {
		return 0, nil, fmt.Errorf("%w: a %q frame of %d bytes (at most %d)", ErrFrameTooLarge, hdr[0], n, max)
	}
	if cap(buf) >= int(n) {
		payload = buf[:n]
	} else {
		payload = make([]byte, n)
	}
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, nil, noEOF(err)
	}
	return hdr[0], payload, nil
}

// ReadJSON reads one frame, which must be of kind, into v.
func ReadJSON(r io.Reader, kind byte, max int, v any) error {
	k, p, err := ReadFrame(r, max, nil)
	if err != nil {
		return err
	}
	if k != kind {
		return fmt.Errorf("%w: a %q frame where a %q frame was due", ErrProtocol, k, kind)
	}
	if err := json.Unmarshal(p, v); err != nil {
		return fmt.Errorf("%w: %v", ErrProtocol, err)
	}
	return nil
}

// noEOF makes an end inside a frame unexpected.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Receive windows: what one end lets the other send on a stream before it
// has read it. The engine's is yamux's smallest, 256 KiB, which bounds what
// an agent can make the engine hold per stream; the agent's is larger, so
// that what the engine sends (downloads through the gate, files) is not
// held back by a window update's round trip through the runtime.
const (
	engineWindow = 256 << 10
	agentWindow  = 8 << 20
)

// config is the session's: a peer that stops answering ends it within
// about half a minute; a data frame longer than the stream's window is a
// protocol error, so no frame makes either end hold more than its window.
func config(window uint32) *yamux.Config {
	c := yamux.DefaultConfig()
	c.MaxStreamWindowSize = window
	c.AcceptBacklog = MaxStreams
	c.EnableKeepAlive = true
	c.KeepAliveInterval = 10 * time.Second
	c.ConnectionWriteTimeout = 10 * time.Second
	c.StreamOpenTimeout = 10 * time.Second
	c.StreamCloseTimeout = 30 * time.Second
	c.LogOutput = io.Discard
	return c
}

// Session is one end of the multiplexed stream.
type Session = yamux.Session

// Stream is one operation's stream.
type Stream = yamux.Stream

// Client runs the engine's end of a session over conn.
func Client(conn io.ReadWriteCloser) (*Session, error) {
	return yamux.Client(coalesce(conn), config(engineWindow))
}

// Server runs the agent's end of a session over conn.
func Server(conn io.ReadWriteCloser) (*Session, error) {
	return yamux.Server(coalesce(conn), config(agentWindow))
}

// Dropped reports whether err is a stream that ended before its operation
// did: the peer closed or reset it, or the session went.
func Dropped(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, yamux.ErrStreamClosed) ||
		errors.Is(err, yamux.ErrConnectionReset) || errors.Is(err, yamux.ErrSessionShutdown)
}
