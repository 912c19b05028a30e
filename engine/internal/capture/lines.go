package capture

import (
	"bytes"
	"strings"
	"sync"

	"github.com/sandtray/sandtray/engine/internal/safetext"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// maxLine caps a line that never ends (a progress bar redrawn with \r).
const maxLine = 4 << 10

// lineProgress reports each line written to it to a Progress callback and
// keeps the last max bytes, for the result: a package manager's errors come
// at the end. Stdout and stderr share it, so it locks.
type lineProgress struct {
	fn  sandbox.Progress // nil: lines are only kept
	max int

	mu      sync.Mutex
	partial []byte
	lines   int
	kept    []byte
	cut     bool
}

func (l *lineProgress) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.kept = append(l.kept, p...)
	if len(l.kept) > 2*l.max {
		l.kept, l.cut = append([]byte(nil), l.kept[len(l.kept)-l.max:]...), true
	}
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.emit(l.partial[:i])
		l.partial = l.partial[i+1:]
	}
	if len(l.partial) > maxLine {
		l.emit(l.partial)
		l.partial = nil
	}
	return len(p), nil
}

func (l *lineProgress) emit(line []byte) {
	text := strings.TrimSpace(safetext.Clean(line))
	if text == "" || l.fn == nil {
		return
	}
	l.lines++
	l.fn(float64(l.lines), 0, text)
}

// output is the kept end of the output, marked when the start was cut.
func (l *lineProgress) output() string { return l.tail(l.max) }

// tail is the last n bytes (at most max) of the output.
func (l *lineProgress) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, cut := l.kept, l.cut
	if len(b) > n {
		b, cut = b[len(b)-n:], true
	}
	text := strings.ToValidUTF8(string(b), "")
	if cut {
		return "[… earlier output cut …]\n" + text
	}
	return text
}
