package egress

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"testing/synctest"
	"time"
)

// The scrub's matcher, on its own: what it replaces, what it holds back at
// the end of what has come so far, and what it lets through.
func TestScrubMatcher(t *testing.T) {
	ph := placeholder{text: "sandtray_ph_abcdefghijklmnopqrstuvwxyz0", s: &secret{Secret: Secret{Name: "K", Value: "sk-Live-0123456789ABCDEFGHIJ_klmnopqrst"}}}
	m := scrubMatcher([]placeholder{ph})
	for _, c := range []struct{ in, want string }{
		{"no value here", "no value here"},
		{"key=sk-Live-0123456789ABCDEFGHIJ_klmnopqrst.", "key=" + ph.text + "."},
		{"KEY=SK-LIVE-0123456789abcdefghij_KLMNOPQRST", "KEY=" + ph.text},
		{"part: 3456789ABCDE!", "part: " + ph.text[11:23] + "!"},
		{"seven: 0123456 is not enough", "seven: 0123456 is not enough"},
	} {
		if got := m.replaceString(c.in); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
		for _, r := range []io.Reader{iotest.OneByteReader(strings.NewReader(c.in)), iotest.HalfReader(strings.NewReader(c.in))} {
			if got, _ := io.ReadAll(newReplacer(io.NopCloser(r), m, nil)); string(got) != c.want {
				t.Errorf("%q, streamed: got %q, want %q", c.in, got, c.want)
			}
		}
	}
	// A stream that pauses: an end that may begin a run of the value is
	// held back, for as long as it takes from 4 bytes on, for heldFor when
	// shorter; what comes after it is replaced as a run.
	synctest.Test(t, func(t *testing.T) {
		pr, pw := io.Pipe()
		x := newPacedReplacer(pr, m)
		defer x.Close()
		read := func() string {
			b := make([]byte, 100)
			n, _ := x.Read(b)
			return string(b[:n])
		}
		go pw.Write([]byte("text then sk-"))
		start := time.Now()
		if got := read(); got != "text then " {
			t.Fatalf("got %q first", got)
		}
		if got := read(); got != "sk-" || time.Since(start) != heldFor {
			t.Fatalf("then %q after %s; want the short end after %s", got, time.Since(start), heldFor)
		}
		go pw.Write([]byte("Live-0123456789ABCDEFGHIJ_klmnopqrst and text then sk-L"))
		if got := read(); got != ph.text[3:]+" and text then " {
			t.Fatalf("a run that came after a pause: %q", got)
		}
		var last string
		done := make(chan struct{})
		go func() { last = read(); close(done) }()
		time.Sleep(time.Hour)
		synctest.Wait()
		select {
		case <-done:
			t.Fatalf("an end of 4 bytes that may begin a run went on: %q", last)
		default:
		}
		pw.Write([]byte("ive-0123456789ABCDEFGHIJ_klmnopqrst."))
		<-done
		if last != ph.text+"." {
			t.Fatalf("the run held back and what followed: %q", last)
		}
	})
}
