package egress

import (
	"bytes"
	"encoding/binary"
	"io"
	"slices"
	"sync"
	"time"
)

// The gate rewrites streams as they pass: a request body gets the values
// of secrets in place of their placeholders, an answer gets the
// placeholders back in place of what would show a value (scrub.go). A
// matcher knows what to look for; a replacer applies one to a stream,
// holding back only an end that could begin a match, in buffers it keeps
// (F63: the first cut allocated each read).

// keyLen is how many bytes a pattern is looked up by: every pattern is at
// least this long (a value, a placeholder, a window of a value).
const keyLen = 8

// pattern is one thing a matcher replaces.
type pattern struct {
	text []byte // what to find, lower-cased when the matcher folds case
	repl []byte // what takes its place
	swap int    // the index a hit reports
	// A window (long) is any run of keyLen bytes or more of a value: text
	// is the whole value (folded), off where the window starts, and repl
	// the whole placeholder; a match of text[off:off+n] is replaced by
	// repl[off:off+n].
	window bool
	off    int
}

// matcher finds patterns in bytes: by their first keyLen bytes, after a
// cheap test of their first two.
type matcher struct {
	fold bool
	// hold is, for a paced replacer, the shortest end held back for as
	// long as it takes when it may begin a match; a shorter one goes on
	// after heldFor without more (see newPacedReplacer). 0: every end.
	hold   int
	start2 [1 << 16 / 64]uint64 // the first two bytes of every pattern (folded)
	start1 [256]bool            // the bytes a pattern may start with, as written (both cases when folding)
	firsts string               // the same, as a list
	byKey  map[uint64][]*pattern
	all    []*pattern
	maxLen int
}

// lower is ASCII lower case, for folding.
var lower = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if i >= 'A' && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

// identity is no folding.
var identity = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
	}
	return t
}()

func (m *matcher) f(c byte) byte {
	if m.fold {
		return lower[c]
	}
	return c
}

func (m *matcher) foldAll(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = m.f(c)
	}
	return out
}

// add adds a pattern of at least keyLen bytes (a shorter one is dropped:
// nothing that short is replaced, see parseSecrets).
func (m *matcher) add(p *pattern) {
	if m.byKey == nil {
		m.byKey = map[uint64][]*pattern{}
	}
	p.text = m.foldAll(p.text)
	starts := []int{0}
	if p.window {
		starts = starts[:0]
		for off := 0; off+keyLen <= len(p.text); off++ {
			starts = append(starts, off)
		}
	}
	if len(p.text) < keyLen {
		return
	}
	for _, off := range starts {
		q := p
		if p.window {
			c := *p
			c.off = off
			q = &c
		}
		k := binary.LittleEndian.Uint64(p.text[off:])
		m.byKey[k] = append(m.byKey[k], q)
		m.all = append(m.all, q)
		s := uint16(p.text[off])<<8 | uint16(p.text[off+1])
		m.start2[s/64] |= 1 << (s % 64)
		for _, c := range []byte{p.text[off], p.text[off] - 'a' + 'A'} {
			if !m.start1[c] && (c == p.text[off] || m.fold && p.text[off] >= 'a' && p.text[off] <= 'z') {
				m.start1[c] = true
				m.firsts += string(c)
			}
		}
	}
	m.maxLen = max(m.maxLen, len(p.text))
}

// empty reports whether m has nothing to find.
func (m *matcher) empty() bool { return m == nil || len(m.all) == 0 }

// at looks for the longest match at b[i:]: n bytes replaced by repl, the
// pattern's swap in which. more means b[i:] could be the start of a match
// that needs bytes after b (never at eof): the caller waits for them.
func (m *matcher) at(b []byte, i int, eof bool) (n int, repl []byte, which int, more bool) {
	rest := len(b) - i
	if rest < 2 {
		return 0, nil, 0, rest == 1 && !eof && m.start1[b[i]]
	}
	if s := uint16(m.f(b[i]))<<8 | uint16(m.f(b[i+1])); m.start2[s/64]&(1<<(s%64)) == 0 {
		return 0, nil, 0, false
	}
	if rest < keyLen {
		return 0, nil, 0, !eof && m.couldStart(b[i:])
	}
	var key [keyLen]byte
	for k := range key {
		key[k] = m.f(b[i+k])
	}
	for _, p := range m.byKey[binary.LittleEndian.Uint64(key[:])] {
		text := p.text[p.off:]
		l := keyLen
		for l < len(text) && i+l < len(b) && m.f(b[i+l]) == text[l] {
			l++
		}
		switch {
		case l < len(text) && i+l == len(b) && !eof:
			return 0, nil, 0, true // it may go on in what follows
		case p.window && l > n:
			n, repl, which = l, p.repl[p.off:p.off+l], p.swap
		case !p.window && l == len(text) && l > n:
			n, repl, which = l, p.repl, p.swap
		}
	}
	return n, repl, which, false
}

// couldStart reports whether b (shorter than keyLen) is the start of some
// pattern (for a window: of a run of the value).
func (m *matcher) couldStart(b []byte) bool {
	for _, p := range m.all {
		text := p.text[p.off:]
		if len(b) > len(text) {
			continue
		}
		same := true
		for k := range b {
			if m.f(b[k]) != text[k] {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	return false
}

// replace appends b with every match replaced to out, up to the first
// place where a match could go on past b (unless eof); it returns out and
// how much of b it used. hit, when set, hears of each match.
func (m *matcher) replace(out, b []byte, eof bool, hit func(int)) ([]byte, int) {
	from := 0
	for i := m.next(b, 0); i < len(b); i = m.next(b, i) {
		n, repl, which, more := m.at(b, i, eof)
		if more {
			return append(out, b[from:i]...), i
		}
		if n == 0 {
			i++
			continue
		}
		out = append(append(out, b[from:i]...), repl...)
		if hit != nil {
			hit(which)
		}
		i += n
		from = i
	}
	return append(out, b[from:]...), len(b)
}

// next is where in b, from i on, a pattern may start: len(b) if nowhere.
func (m *matcher) next(b []byte, i int) int {
	var k int
	switch {
	case len(m.firsts) == 1:
		k = bytes.IndexByte(b[i:], m.firsts[0])
	case len(m.firsts) <= 4:
		k = bytes.IndexAny(b[i:], m.firsts)
	default:
		// Two bytes at a time against the patterns' first two: in text,
		// most places fail at once.
		tab := &identity
		if m.fold {
			tab = &lower
		}
		for k = i; k+1 < len(b); k++ {
			s := uint16(tab[b[k]])<<8 | uint16(tab[b[k+1]])
			if m.start2[s/64]&(1<<(s%64)) != 0 {
				return k
			}
		}
		if k < len(b) && m.start1[b[k]] {
			return k
		}
		return len(b)
	}
	if k < 0 {
		return len(b)
	}
	return i + k
}

// replaceString is s with every match replaced.
func (m *matcher) replaceString(s string) string {
	if m.empty() || len(s) < keyLen {
		return s
	}
	out, _ := m.replace(nil, []byte(s), true, nil)
	return string(out)
}

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
