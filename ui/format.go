package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/serve/control"
)

// placeholder stands in for a value that is unknown or not applicable.
const placeholder = "—"

// FormatBytes renders a byte count with binary units, as `docker stats` does.
func FormatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	value, exp := float64(n)/unit, 0
	for value >= unit && exp < 4 {
		value /= unit
		exp++
	}
	suffix := []string{"KiB", "MiB", "GiB", "TiB", "PiB"}[exp]
	if value >= 100 {
		return fmt.Sprintf("%.0f %s", value, suffix)
	}
	return fmt.Sprintf("%.1f %s", value, suffix)
}

// FormatPercent renders a CPU share where 100 is one full core.
func FormatPercent(p float64) string {
	if p < 0 {
		p = 0
	}
	if p >= 100 {
		return fmt.Sprintf("%.0f%%", p)
	}
	return fmt.Sprintf("%.1f%%", p)
}

// FormatMemory renders used / limit memory, or just the use when there is no limit.
func FormatMemory(s sandbox.Stats) string {
	if s.MemoryLimit == 0 {
		return FormatBytes(s.MemoryBytes)
	}
	return FormatBytes(s.MemoryBytes) + " / " + FormatBytes(s.MemoryLimit)
}

// FormatAge renders how long ago t was, coarsely: "12s", "5m", "3h 20m", "4d 2h".
func FormatAge(now, t time.Time) string {
	if t.IsZero() {
		return placeholder
	}
	d := now.Sub(t)
	switch {
	case d < time.Second:
		return "now"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%dd %dh", int(d.Hours())/24, int(d.Hours())%24)
	}
}

// FormatDuration renders a duration in milliseconds: "15 ms", "1.2 s", "2m 03s".
func FormatDuration(ms int64) string {
	switch {
	case ms < 0:
		return placeholder
	case ms < 1000:
		return fmt.Sprintf("%d ms", ms)
	case ms < 60_000:
		return fmt.Sprintf("%.1f s", float64(ms)/1000)
	default:
		return fmt.Sprintf("%dm %02ds", ms/60_000, ms/1000%60)
	}
}

// StatusText is the word the list shows for a sandbox's status.
func StatusText(s sandbox.Status) string {
	switch s {
	case sandbox.StatusRunning:
		return "Running"
	case sandbox.StatusStopped:
		return "Stopped"
	case sandbox.StatusPaused:
		return "Paused"
	case sandbox.StatusMissing:
		return "Missing"
	case "":
		return placeholder
	}
	return strings.ToUpper(string(s[:1])) + string(s[1:])
}

// OwnerText names the client and session that own a sandbox.
func OwnerText(o sandbox.Owner) string {
	switch {
	case o.Client == "" && o.Session == "":
		return placeholder
	case o.Session == "":
		return o.Client
	case o.Client == "":
		return "session " + ShortID(o.Session)
	}
	return o.Client + " · " + ShortID(o.Session)
}

// ShortID shortens a container or session id to its first 12 characters.
func ShortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// ExitText summarises how an activity entry ended.
func ExitText(a sandbox.Activity) string {
	switch {
	case a.TimedOut:
		return "timed out"
	case a.Error != "":
		return "failed"
	case a.ExitCode != nil:
		return fmt.Sprintf("exit %d", *a.ExitCode)
	}
	return "ok"
}

// FirstLine returns s's first non-empty line, cut to max runes with an ellipsis.
func FirstLine(s string, max int) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			if r := []rune(line); len(r) > max {
				return string(r[:max-1]) + "…"
			}
			return line
		}
	}
	return ""
}

// DockerText is the status line's account of the Docker connection.
func DockerText(d sandbox.DockerStatus) string {
	name := "Docker"
	if d.Runtime != "" && d.Runtime != "docker" { // [runtime] name chose another
		name = "Runtime " + d.Runtime
	}
	if !d.Connected {
		if d.Error == "" {
			return name + " disconnected"
		}
		return name + " disconnected: " + d.Error
	}
	text := name + " connected"
	if d.Version != "" {
		text += " · " + d.Version
	}
	if d.Host != "" {
		text += " · " + d.Host
	}
	if d.HostSource != "" {
		text += " (" + d.HostSource + ")"
	}
	return text
}

// ClientsText counts connected MCP clients.
func ClientsText(n int) string {
	if n == 1 {
		return "1 MCP client"
	}
	return fmt.Sprintf("%d MCP clients", n)
}

// RunningText is the tray menu's count of running sandboxes.
func RunningText(n int) string {
	switch n {
	case 0:
		return "No sandboxes running"
	case 1:
		return "1 sandbox running"
	}
	return fmt.Sprintf("%d sandboxes running", n)
}

// LimitsText lists the resource limits a sandbox was created with.
func LimitsText(s sandbox.Spec) string {
	parts := []string{}
	if s.MemoryMB > 0 {
		parts = append(parts, fmt.Sprintf("memory %d MiB (no swap)", s.MemoryMB))
	}
	if s.CPUs > 0 {
		parts = append(parts, CPUsText(s.CPUs))
	}
	if s.PidsLimit > 0 {
		parts = append(parts, fmt.Sprintf("%d processes", s.PidsLimit))
	}
	if len(parts) == 0 {
		return "Docker defaults"
	}
	return strings.Join(parts, ", ")
}

// CPUsText is a CPU limit: "1 CPU", "1.5 CPUs".
func CPUsText(n float64) string {
	if n == 1 {
		return "1 CPU"
	}
	return fmt.Sprintf("%g CPUs", n)
}

// SecurityText summarises the hardening every sandbox runs with.
func SecurityText(s sandbox.Spec) string {
	caps := "all capabilities dropped"
	if len(s.CapAdd) > 0 {
		caps += ", " + strings.Join(s.CapAdd, " ") + " added back"
	}
	runtime := "runc"
	if s.Runtime != "" {
		runtime = s.Runtime
	}
	profile := ""
	switch s.Profile {
	case "strict":
		profile = "strict profile: read-only root, workdir and /tmp in memory, non-root user, no network; "
	case "standard":
		profile = "standard profile; "
	}
	return profile + caps + "; no-new-privileges; default seccomp; runtime " + runtime
}

// NetworkText names a sandbox's network mode.
func NetworkText(mode string) string {
	switch mode {
	case "", sandbox.NetworkNone:
		return "none (no network)"
	case sandbox.NetworkBridge:
		return "bridge (internet access)"
	case sandbox.NetworkEgress:
		return "egress (through Sandtray's gate: each host is allowed, asked about or refused; see the Network tab)"
	}
	return mode
}

// ActivityTitle is an activity entry's one-line summary: when, what, how it ended.
func ActivityTitle(a sandbox.Activity) string {
	parts := []string{a.Time.Local().Format("15:04:05"), a.Tool}
	if a.Language != "" {
		parts = append(parts, a.Language)
	}
	parts = append(parts, ExitText(a))
	if a.Duration > 0 {
		parts = append(parts, FormatDuration(a.Duration))
	}
	if a.Client != "" {
		parts = append(parts, a.Client)
	}
	return strings.Join(parts, " · ")
}

// ActivityText is an activity entry in full, as shown and copied.
func ActivityText(a sandbox.Activity) string {
	var b strings.Builder
	b.WriteString(ActivityTitle(a))
	b.WriteString("\n")
	if a.Input != "" {
		b.WriteString("\n" + a.Input + "\n")
	}
	if a.Stdout != "" {
		b.WriteString("\n── stdout ──\n" + strings.TrimRight(a.Stdout, "\n") + "\n")
	}
	if a.Stderr != "" {
		b.WriteString("\n── stderr ──\n" + strings.TrimRight(a.Stderr, "\n") + "\n")
	}
	if a.Error != "" {
		b.WriteString("\nError: " + a.Error + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// MatchActivity returns the indexes of the entries that contain query
// (case-insensitive) in their tool, client, input, output or error.
func MatchActivity(entries []control.LogEntry, query string) []int {
	q := strings.ToLower(strings.TrimSpace(query))
	out := make([]int, 0, len(entries))
	for i, a := range entries {
		if q == "" || containsFold(q, a.Tool, a.Client, a.Language, a.Input, a.Stdout, a.Stderr, a.Error) {
			out = append(out, i)
		}
	}
	return out
}

func containsFold(q string, fields ...string) bool {
	for _, f := range fields {
		if strings.Contains(strings.ToLower(f), q) {
			return true
		}
	}
	return false
}

// SocketText names the socket MCP clients connect to.
func SocketText(path string) string {
	if path == "" {
		return "No MCP socket"
	}
	return "Socket " + path
}
