package kernel

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

type seenFrame struct {
	Kind    byte
	Payload string
}

func TestFrameReader(t *testing.T) {
	var stream []byte
	stream = appendFrame(stream, frameStdout, []byte("D\x00\x00\x00\x05hello")) // output that looks like a frame
	stream = appendFrame(stream, frameStderr, nil)
	stream = appendFrame(stream, frameDone, []byte(`{"id":"a"}`))
	tests := []struct {
		name   string
		input  []byte
		want   []seenFrame
		broken string
	}{
		{"whole frames, output taken as output", stream,
			[]seenFrame{{frameStdout, "D\x00\x00\x00\x05hello"}, {frameStderr, ""}, {frameDone, `{"id":"a"}`}}, ""},
		{"an oversized frame breaks the stream", appendFrame(appendFrame(nil, frameStdout, []byte("ok")), frameStdout, make([]byte, 65)),
			[]seenFrame{{frameStdout, "ok"}}, "over the 64-byte limit"},
		{"a rejected frame breaks the stream", appendFrame(appendFrame(nil, 'Z', nil), frameStdout, []byte("lost")),
			nil, "unknown"},
	}
	for _, tt := range tests {
		for _, piece := range []int{1, 3, len(tt.input)} { // Docker delivers pieces of any size
			var got []seenFrame
			var broken error
			r := &frameReader{max: 64, broken: func(err error) { broken = err },
				handle: func(kind byte, payload []byte) error {
					if kind == 'Z' {
						return errors.New("unknown frame")
					}
					got = append(got, seenFrame{kind, string(payload)})
					return nil
				}}
			for i := 0; i < len(tt.input); i += piece {
				if n, err := r.Write(tt.input[i:min(i+piece, len(tt.input))]); err != nil || n != min(piece, len(tt.input)-i) {
					t.Fatalf("%s: Write = %d, %v", tt.name, n, err)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s, pieces of %d: frames (-want +got):\n%s", tt.name, piece, diff)
			}
			if (broken == nil) != (tt.broken == "") || broken != nil && !strings.Contains(broken.Error(), tt.broken) {
				t.Errorf("%s, pieces of %d: broken = %v, want %q", tt.name, piece, broken, tt.broken)
			}
		}
	}
}

// TestKernelInputEndsWithStream: the stdin copier returns as soon as Exec
// says the stream ended, with no frame to send and no probe.
func TestKernelInputEndsWithStream(t *testing.T) {
	in := newKernelInput()
	w := &closableWriter{closed: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := in.WriteTo(w)
		done <- err
	}()
	if err := in.send([]byte("frame")); err != nil {
		t.Fatal(err)
	}
	w.close()
	in.StreamEnded()
	select {
	case <-done:
	case <-time.After(probeInterval / 2):
		t.Fatal("WriteTo did not end with the stream")
	}
	if err := in.send([]byte("late")); !errors.Is(err, errKernelGone) {
		t.Errorf("send after the end = %v, want errKernelGone", err)
	}
}

// TestKernelInputEndsWithConnection: without StreamEnded, the stdin copier
// still returns once Exec closes the connection, at its next probe (in a
// synctest bubble: the probe's 30 s pass at once).
func TestKernelInputEndsWithConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := newKernelInput()
		w := &closableWriter{closed: make(chan struct{})}
		done := make(chan error, 1)
		go func() {
			_, err := in.WriteTo(w)
			done <- err
		}()
		if err := in.send([]byte("frame")); err != nil {
			t.Fatal(err)
		}
		w.close()
		select {
		case err := <-done:
			if err == nil {
				t.Error("WriteTo ended without the connection's error")
			}
		case <-time.After(2 * probeInterval):
			t.Fatal("WriteTo did not notice the closed connection")
		}
		if err := in.send([]byte("late")); !errors.Is(err, errKernelGone) {
			t.Errorf("send after the end = %v, want errKernelGone", err)
		}
	})
}

// closableWriter fails every write, empty ones included, once closed, as a
// closed net.Conn does.
type closableWriter struct{ closed chan struct{} }

func (w *closableWriter) close() { close(w.closed) }

func (w *closableWriter) Write(p []byte) (int, error) {
	select {
	case <-w.closed:
		return 0, errors.New("use of closed network connection")
	default:
		return len(p), nil
	}
}

// TestKernelInputSendWithinGivesUp: with nobody reading the input (Docker has
// not attached the exec yet), a bounded send returns instead of hanging kill.
func TestKernelInputSendWithinGivesUp(t *testing.T) {
	in := newKernelInput()
	start := time.Now()
	if err := in.sendWithin([]byte("K"), 50*time.Millisecond); err == nil {
		t.Fatal("a send nobody read succeeded")
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("sendWithin took %s for a 50ms bound", took)
	}
}

// TestWaitKernelsAbortsAHungExec: a kernel whose exec never ends by itself
// (its goroutine waits for the abort) does not hang the engine's Close.
func TestWaitKernelsAbortsAHungExec(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(1)
	hung := &kernel{cancel: func() { wg.Done() }}
	start := time.Now()
	waitKernels(&wg, []*kernel{hung}, 50*time.Millisecond)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("waitKernels took %s", took)
	}
}
