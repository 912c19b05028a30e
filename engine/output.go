package engine

import (
	"bytes"
	"strings"
	"sync"
	"unicode/utf8"
)

// capBuffer keeps the first max bytes written to it and counts the rest, so
// an exec that prints forever costs bounded memory.
type capBuffer struct {
	max   int
	buf   bytes.Buffer
	total int64
}

func (c *capBuffer) Write(p []byte) (int, error) {
	c.total += int64(len(p))
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// head returns at most n bytes as valid UTF-8, and whether anything was cut.
func (c *capBuffer) head(n int) (string, bool) {
	b := c.buf.Bytes()
	cut := c.total > int64(n)
	if len(b) > n {
		b = b[:n]
	}
	return cleanText(b), cut
}

// cleanText makes output safe to put in JSON for a model: invalid UTF-8
// becomes U+FFFD, and a sequence split by a cap is dropped.
func cleanText(b []byte) string {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c&0xC0 == 0x80 {
			continue // a continuation byte: the sequence starts further back
		}
		if c >= 0xC0 && !utf8.FullRune(b[len(b)-i:]) {
			b = b[:len(b)-i]
		}
		break
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// jobOutput is a background job's combined output, readable from an offset
// while the job still writes it. It keeps up to max bytes; later output is
// counted but dropped.
type jobOutput struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	total int64
}

func (j *jobOutput) Write(p []byte) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.total += int64(len(p))
	if room := j.max - len(j.buf); room > 0 {
		j.buf = append(j.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// since returns the output from offset and the offset to ask from next time.
func (j *jobOutput) since(offset int64) (string, int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if offset < 0 || offset > int64(len(j.buf)) {
		offset = int64(len(j.buf))
	}
	return cleanText(j.buf[offset:]), int64(len(j.buf))
}
