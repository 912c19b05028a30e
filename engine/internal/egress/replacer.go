package egress

import (
	"io"
	"slices"
	"sync"
	"time"
)

// replacer is a stream with a matcher's matches replaced.
type replacer struct {
	r   io.ReadCloser
	m   *matcher
	hit func(int)
	in  []byte // read, not yet replaced: at most an end that may begin a match
	out []byte // replaced, not yet read: the unread part of buf
	buf []byte
	eof bool
	err error
	// A paced replacer reads ahead (pump) so that it can give up waiting
	// for what follows a short end it holds back.
	paced bool
	feed  chan readResult // what pump read
	free  chan []byte     // buffers back to pump
	done  chan struct{}   // closed by Close: pump returns
	stop  sync.Once
	timer *time.Timer
}

type readResult struct {
	b   []byte
	err error
}

// readChunk is how much a replacer reads at once.
const readChunk = 32 << 10

// heldFor is how long a paced replacer holds back an end shorter than its
// matcher's hold when nothing follows it.
const heldFor = 100 * time.Millisecond

// newReplacer replaces m's matches in r as it is read, holding back any end
// that may begin one until what follows comes or r ends: a request body,
// whose every placeholder must be swapped whatever its chunks.
func newReplacer(r io.ReadCloser, m *matcher, hit func(int)) *replacer {
	return &replacer{r: r, m: m, hit: hit}
}

// newPacedReplacer is newReplacer for a stream that may pause (an answer,
// a WebSocket): an end held back because it may begin a match goes on
// after heldFor without more when it is shorter than m.hold, so a message
// that ends in a byte of a value is not held up until the next one. Where
// a stream pauses inside a value, at most m.hold-1 of its bytes show; the
// rest, being a run of it, is replaced when it comes. Close ends its
// reading ahead.
func newPacedReplacer(r io.ReadCloser, m *matcher) *replacer {
	return &replacer{r: r, m: m, paced: true, feed: make(chan readResult), free: make(chan []byte, 2), done: make(chan struct{})}
}

func (x *replacer) Read(p []byte) (int, error) {
	for len(x.out) == 0 && !x.eof {
		if x.in == nil {
			x.in = make([]byte, 0, max(readChunk, 2*x.m.maxLen))
			x.buf = make([]byte, 0, cap(x.in))
			if x.paced {
				x.free <- make([]byte, readChunk)
				x.free <- make([]byte, readChunk)
				go x.pump()
			}
		}
		if !x.fill() {
			x.buf = append(x.buf[:0], x.in...) // a short end, and a pause: it goes on
			x.out, x.in = x.buf, x.in[:0]
			break
		}
		var used int
		x.buf, used = x.m.replace(x.buf[:0], x.in, x.eof, x.hit)
		x.out = x.buf
		x.in = x.in[:copy(x.in, x.in[used:])]
	}
	if len(x.out) == 0 {
		return 0, x.err
	}
	n := copy(p, x.out)
	x.out = x.out[n:]
	return n, nil
}

// fill adds what comes next to in; false when, paced, it held a short end
// for heldFor and nothing came.
func (x *replacer) fill() bool {
	if !x.paced {
		if len(x.in) == cap(x.in) { // never, as what is held back is shorter than half of it
			x.in = slices.Grow(x.in, readChunk)
		}
		n, err := x.r.Read(x.in[len(x.in):cap(x.in)])
		x.in = x.in[:len(x.in)+n]
		if err != nil {
			x.eof, x.err = true, err
		}
		return true
	}
	var res readResult
	var ok bool
	if held := len(x.in); held > 0 && held < x.m.hold {
		if x.timer == nil {
			x.timer = time.NewTimer(heldFor)
		} else {
			x.timer.Reset(heldFor)
		}
		select {
		case res, ok = <-x.feed:
			x.timer.Stop()
		case <-x.timer.C:
			return false
		}
	} else {
		res, ok = <-x.feed
	}
	if !ok {
		res.err = io.ErrClosedPipe
	}
	x.in = append(x.in, res.b...)
	if res.b != nil {
		x.free <- res.b[:0]
	}
	if res.err != nil {
		x.eof, x.err = true, res.err
	}
	return true
}

// pump reads r ahead into the free buffers, until r ends or Close.
func (x *replacer) pump() {
	defer close(x.feed)
	for {
		var b []byte
		select {
		case b = <-x.free:
		case <-x.done:
			return
		}
		n, err := x.r.Read(b[:cap(b)])
		select {
		case x.feed <- readResult{b[:n], err}:
		case <-x.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// Close closes the stream, and ends a paced replacer's reading ahead.
func (x *replacer) Close() error {
	if x.paced {
		x.stop.Do(func() { close(x.done) })
	}
	return x.r.Close()
}
