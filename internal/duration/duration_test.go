package duration

import (
	"testing"
	"time"
)

func TestText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Minute: "1 min", 90 * time.Second: "1 min 30 s", 2*time.Hour + 30*time.Minute: "2 h 30 min",
		45 * time.Second: "45 s", 250 * time.Millisecond: "250 ms", 0: "0 s", time.Hour: "1 h",
	} {
		if got := Text(d); got != want {
			t.Errorf("Text(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestGo(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Minute: "1m", time.Hour: "1h", 90 * time.Second: "1m30s", 30 * time.Second: "30s", time.Hour + time.Second: "1h0m1s",
	} {
		if got := Go(d); got != want {
			t.Errorf("Go(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestParse(t *testing.T) {
	for s, want := range map[string]time.Duration{
		"1 min": time.Minute, "1m0s": time.Minute, "90s": 90 * time.Second, "1 min 30 s": 90 * time.Second,
		"2 hours": 2 * time.Hour, "1min": time.Minute, " 30 s ": 30 * time.Second, "1 h 30 min": 90 * time.Minute,
		"0.5 min": 30 * time.Second,
	} {
		if got, err := Parse(s); err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "soon", "10", "min", "10 parsecs"} {
		if d, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) = %v; want an error", s, d)
		}
	}
	for _, d := range []time.Duration{time.Minute, 90 * time.Second, 3*time.Hour + 5*time.Minute, 250 * time.Millisecond} {
		if got, err := Parse(Text(d)); err != nil || got != d {
			t.Errorf("Parse(Text(%v)) = %v, %v", d, got, err)
		}
	}
}
