package tools

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// formatBytes renders a size for people: "512 B", "1.5 KiB", "16 MiB".
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	value, suffix := float64(n), ""
	for _, s := range []string{"KiB", "MiB", "GiB", "TiB"} {
		value /= unit
		suffix = s
		if value < unit {
			break
		}
	}
	return strings.TrimSuffix(strconv.FormatFloat(value, 'f', 1, 64), ".0") + " " + suffix
}

// formatSeconds renders a duration as seconds, to the millisecond: "30s", "1.25s".
func formatSeconds(d time.Duration) string {
	// From whole milliseconds: Duration.Seconds of 2.603 s is 2.6029999999999998.
	return strconv.FormatFloat(float64(d.Round(time.Millisecond).Milliseconds())/1000, 'f', -1, 64) + "s"
}

// truncate shortens s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	runes := []rune(s)
	return string(runes[:n]) + "…"
}

// shortID is the 12-character form of a sandbox id that `docker ps` shows;
// every tool accepts it as a unique prefix.
func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// describe names a JSON value's type for an error message.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", truncate(v, 40))
	case float64:
		return fmt.Sprintf("the number %v", v)
	case bool:
		return fmt.Sprintf("%v", v)
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	default:
		return "null"
	}
}

// writeBlock writes s and ends it with a newline.
func writeBlock(b *strings.Builder, s string) {
	b.WriteString(s)
	if s != "" && !strings.HasSuffix(s, "\n") {
		b.WriteByte('\n')
	}
}

// plural picks the word for n things.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// nonNil makes an absent list encode as [] rather than null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// orDash shows an empty table cell as "-".
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
