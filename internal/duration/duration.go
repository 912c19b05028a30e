// Package duration writes durations for people ("1 min", "1 h 30 min",
// "30 s") and reads them back, as well as Go's own form ("90s", "1m30s"),
// for the Settings window and the config it writes.
package duration

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// units are the units Text writes and Parse reads, largest first, with the
// other names Parse takes for them.
var units = []struct {
	name  string
	d     time.Duration
	other []string
}{
	{"h", time.Hour, []string{"hour", "hours", "hr", "hrs"}},
	{"min", time.Minute, []string{"m", "mins", "minute", "minutes"}},
	{"s", time.Second, []string{"sec", "secs", "second", "seconds"}},
	{"ms", time.Millisecond, []string{"msec", "millisecond", "milliseconds"}},
}

// Text writes d for a person: "1 min", "1 h 30 min", "45 s", "250 ms";
// a part of a second below a millisecond is dropped.
func Text(d time.Duration) string {
	if d <= 0 {
		return "0 s"
	}
	var parts []string
	for _, u := range units {
		if n := d / u.d; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, u.name))
			d -= n * u.d
		}
	}
	return strings.Join(parts, " ")
}

// Go writes d in Go's form, without its zero parts: "1m", "1h30m", "45s".
func Go(d time.Duration) string {
	s := d.String()
	for _, z := range []string{"h0m0s", "m0s"} {
		if strings.HasSuffix(s, z) {
			s = strings.TrimSuffix(s, z) + z[:1]
		}
	}
	return s
}

// Parse reads a duration in Go's form ("90s", "1m30s") or as Text writes
// it ("1 min 30 s", "2 hours", "1min").
func Parse(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	bad := fmt.Errorf("%q is not a duration such as \"30 s\", \"10 min\" or \"1 h 30 min\"", s)
	var total time.Duration
	rest := strings.ToLower(s)
	if rest == "" {
		return 0, bad
	}
	for rest != "" {
		i := strings.IndexFunc(rest, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
		if i <= 0 {
			return 0, bad
		}
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil {
			return 0, bad
		}
		rest = strings.TrimLeft(rest[i:], " ")
		j := strings.IndexFunc(rest, func(r rune) bool { return r == ' ' || (r >= '0' && r <= '9') })
		if j < 0 {
			j = len(rest)
		}
		unit, ok := unitOf(rest[:j])
		if !ok {
			return 0, bad
		}
		total += time.Duration(n * float64(unit))
		rest = strings.TrimLeft(rest[j:], " ,")
	}
	return total, nil
}

func unitOf(name string) (time.Duration, bool) {
	for _, u := range units {
		if name == u.name {
			return u.d, true
		}
		for _, o := range u.other {
			if name == o {
				return u.d, true
			}
		}
	}
	return 0, false
}
