package egress

import (
	"bytes"
	"encoding/binary"
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
