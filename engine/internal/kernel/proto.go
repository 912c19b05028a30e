package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Frame types of the kernel protocol (see kernelsrc/supervisor.py). Each
// frame is a type byte, a 4-byte big-endian payload length, and the payload.
// Every byte user code prints travels inside a frame, so no output can pass
// for one; there are no sentinel strings.
const (
	frameRun       = 'R' // engine → kernel: kernelRequest.encode
	frameInterrupt = 'I' // engine → kernel: SIGINT to the code's process group
	frameKill      = 'K' // engine → kernel: SIGKILL to it, and exit
	frameHello     = 'H' // kernel → engine: JSON pids, once started
	frameStdout    = 'O' // kernel → engine: a chunk of the code's stdout
	frameStderr    = 'E' // kernel → engine: a chunk of its stderr
	frameImage     = 'F' // kernel → engine: JSON metadata, a newline, the bytes
	frameDone      = 'D' // kernel → engine: JSON kernelDone, after all output
	frameExit      = 'X' // kernel → engine: the interpreter exited; the kernel ends
)

const frameHeader = 5

// errKernelGone reports a kernel whose exec has ended.
var errKernelGone = errors.New("kernel exited")

// appendFrame encodes one frame.
func appendFrame(dst []byte, kind byte, payload []byte) []byte {
	dst = append(dst, kind, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(dst[len(dst)-4:], uint32(len(payload)))
	return append(dst, payload...)
}

// frameReader parses the kernel's frames from the exec's stdout as Docker
// delivers it, in pieces of any size. A frame over max bytes or one that
// handle rejects breaks the stream: everything after it is dropped, and
// broken is called once, so the kernel can be killed rather than trusted.
type frameReader struct {
	max    int
	handle func(kind byte, payload []byte) error
	broken func(error)

	buf  []byte
	dead bool
}

func (r *frameReader) Write(p []byte) (int, error) {
	if r.dead {
		return len(p), nil
	}
	r.buf = append(r.buf, p...)
	for len(r.buf) >= frameHeader {
		n := int(binary.BigEndian.Uint32(r.buf[1:frameHeader]))
		if n > r.max {
			r.fail(fmt.Errorf("kernel frame of %d bytes is over the %d-byte limit", n, r.max))
			return len(p), nil
		}
		if len(r.buf) < frameHeader+n {
			break
		}
		if err := r.handle(r.buf[0], r.buf[frameHeader:frameHeader+n]); err != nil {
			r.fail(err)
			return len(p), nil
		}
		r.buf = r.buf[frameHeader+n:]
	}
	if len(r.buf) == 0 {
		r.buf = r.buf[:0:0] // let a large frame's buffer go
	}
	return len(p), nil
}

func (r *frameReader) fail(err error) {
	r.dead, r.buf = true, nil
	r.broken(err)
}

// probeInterval is how often an idle kernelInput checks that its exec's
// connection is still open: a safety net only, since Docker's Exec says
// when the stream ended (StreamEnded). An idle kernel then costs no
// wake-ups: with 100 sandboxes, a probe every 200 ms was 500 a second.
const probeInterval = 30 * time.Second

// kernelInput is a kernel's stdin: frames from the engine, for as long as
// the kernel lives. Docker's Exec copies Stdin to the exec and waits for that
// copy to end before it returns, so the copy must end with the exec. As an
// io.WriterTo it writes frames straight to the connection; it ends when
// Exec says the stream ended (StreamEnded) or, as a safety net, at an empty
// write it makes now and then while idle, which fails once Exec has closed
// the connection.
type kernelInput struct {
	frames chan []byte
	closed chan struct{}
	once   sync.Once
	rest   []byte // what is still to be written before the next frame (the boot blob, a frame's rest)
}

func newKernelInput() *kernelInput {
	return &kernelInput{frames: make(chan []byte), closed: make(chan struct{})}
}

// send hands one frame to the copier; it fails once the input is closed.
func (in *kernelInput) send(frame []byte) error {
	select {
	case in.frames <- frame:
		return nil
	case <-in.closed:
		return errKernelGone
	}
}

// sendWithin is send that gives up after d.
func (in *kernelInput) sendWithin(frame []byte, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case in.frames <- frame:
		return nil
	case <-in.closed:
		return errKernelGone
	case <-t.C:
		return fmt.Errorf("kernel input not read within %s: %w", d, errKernelGone)
	}
}

// close ends the input: the kernel sees EOF, and Exec can return.
func (in *kernelInput) close() { in.once.Do(func() { close(in.closed) }) }

// StreamEnded is Docker's Exec saying the exec's output ended and it closed
// the connection: nothing reads this input any more.
func (in *kernelInput) StreamEnded() { in.close() }

// WriteTo is what io.Copy uses; it returns when the input is closed or the
// connection fails.
func (in *kernelInput) WriteTo(w io.Writer) (int64, error) {
	probe := time.NewTicker(probeInterval)
	defer probe.Stop()
	var written int64
	if len(in.rest) > 0 {
		n, err := w.Write(in.rest)
		written, in.rest = int64(n), nil
		if err != nil {
			in.close()
			return written, err
		}
	}
	for {
		var err error
		select {
		case f := <-in.frames:
			var n int
			n, err = w.Write(f)
			written += int64(n)
		case <-probe.C:
			_, err = w.Write(nil)
		case <-in.closed:
			return written, nil
		}
		if err != nil {
			in.close()
			return written, err
		}
	}
}

// Read serves a copier that does not use WriteTo: it blocks for the next
// frame and returns EOF once the input is closed.
func (in *kernelInput) Read(p []byte) (int, error) {
	if len(in.rest) == 0 {
		select {
		case in.rest = <-in.frames:
		case <-in.closed:
			return 0, io.EOF
		}
	}
	n := copy(p, in.rest)
	in.rest = in.rest[n:]
	return n, nil
}
