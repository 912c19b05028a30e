// Package safetext makes output from inside a sandbox safe to hand on: to a
// model's context (JSON), the GUI or a user's terminal. It is pure and
// stdlib only.
package safetext

import (
	"strings"
	"unicode/utf8"
)

// Clean makes output safe to put in JSON for a model: invalid UTF-8 becomes
// U+FFFD, a sequence split by a cap is dropped, and terminal control
// sequences go (see Terminal).
func Clean(b []byte) string {
	return Terminal(strings.ToValidUTF8(string(b[:WholeRunes(b)]), "\uFFFD"))
}

// WholeRunes is the length of b without a UTF-8 sequence cut short at its end.
func WholeRunes(b []byte) int {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c&0xC0 == 0x80 {
			continue // a continuation byte: the sequence starts further back
		}
		if c >= 0xC0 && !utf8.FullRune(b[len(b)-i:]) {
			return len(b) - i
		}
		break
	}
	return len(b)
}

// CapString cuts s to at most n bytes without splitting a UTF-8 sequence.
func CapString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// Terminal keeps output from steering whatever shows it: a model's
// context, the GUI, a user's terminal. Escape sequences are removed: colours
// and cursor moves (CSI) mean nothing once captured, and operating-system
// commands (OSC) can set window titles or write the clipboard. Any other
// control character is shown as U+FFFD, carriage returns become newlines
// (CRLF becomes one newline), and tabs and newlines stay.
func Terminal(s string) string {
	if !hasControl(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b:
			i = skipEscape(s, i)
			continue
		case c == '\r':
			if i+1 >= len(s) || s[i+1] != '\n' {
				b.WriteByte('\n')
			}
		case c == '\t' || c == '\n':
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			b.WriteString("\uFFFD")
		case c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f: // a C1 control
			b.WriteString("\uFFFD")
			i++
		default:
			b.WriteByte(c)
		}
		i++
	}
	return b.String()
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f || (c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f) {
			return true
		}
	}
	return false
}

// skipEscape returns the index just past the escape sequence at s[i] (ESC).
func skipEscape(s string, i int) int {
	if i+1 >= len(s) {
		return i + 1
	}
	switch s[i+1] {
	case '[': // CSI: parameters and intermediates, then one final byte
		j := i + 2
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x3f {
			j++
		}
		if j < len(s) && s[j] >= 0x40 && s[j] <= 0x7e {
			j++
		}
		return j
	case ']', 'P', '_', '^': // OSC and other strings: up to BEL or ST (ESC \)
		for j := i + 2; j < len(s); j++ {
			if s[j] == 0x07 {
				return j + 1
			}
			if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
		}
		return len(s)
	}
	return i + 2 // a two-byte escape such as ESC c
}
