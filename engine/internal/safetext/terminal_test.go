package safetext

import "testing"

func TestTerminalSafe(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain text untouched", "hello\tworld\n", "hello\tworld\n"},
		{"colours stripped", "\x1b[31mred\x1b[0m ok", "red ok"},
		{"cursor moves stripped", "a\x1b[2J\x1b[Hb", "ab"},
		{"window title (OSC, BEL) stripped", "x\x1b]0;pwned\x07y", "xy"},
		{"clipboard write (OSC 52, ST) stripped", "x\x1b]52;c;cm0gLXJm\x1b\\y", "xy"},
		{"unterminated OSC dropped to the end", "x\x1b]0;never ends", "x"},
		{"bell shown", "ding\x07", "ding\uFFFD"},
		{"C1 CSI shown", "a\u009b31mb", "a\uFFFD31mb"},
		{"CRLF becomes LF", "one\r\ntwo\r\n", "one\ntwo\n"},
		{"progress bar CR becomes LF", "10%\r20%\r", "10%\n20%\n"},
		{"two-byte escape stripped", "a\x1bcb", "ab"},
		{"lone ESC at the end", "a\x1b", "a"},
		{"unicode kept", "grüße ✓", "grüße ✓"},
	}
	for _, tt := range tests {
		if got := Terminal(tt.in); got != tt.want {
			t.Errorf("%s: Terminal(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}
