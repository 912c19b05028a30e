// Package settings reads and writes the settings a person changes from the
// tray app's Settings window. It validates a change with the engine's own
// config loader (config.Load on the edited file, before it replaces
// config.toml) and edits config.toml line by line, so comments, key order
// and every key the window does not show stay as the user wrote them.
package settings

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/internal/duration"
)

// Kind is how a setting is typed and written.
type Kind int

// The kinds of setting.
const (
	Text     Kind = iota // a TOML string
	Int                  // a whole number
	Number               // a TOML float
	Duration             // a Go duration such as "30s", written as a string
	Bool                 // true or false
	Choice               // one of Field.Choices, written as a string
	Folders              // an array of absolute paths
)

// Applies says when a change takes effect.
type Applies int

// When changes take effect: the running engine applies what it can when
// Settings saves (engine.Engine.Reconfigure; config.AppliesLive says
// which keys), the rest when Sandtray restarts.
const (
	NewSandboxes Applies = iota // at once, for sandboxes created from now on; running ones keep theirs
	Restart                     // when Sandtray restarts
)

// Field is one setting as the window shows it.
type Field struct {
	Key     string // the TOML key, e.g. "limits.memory_mb"
	Label   string
	Group   string
	Kind    Kind
	Value   string   // the current value as text (not Folders)
	List    []string // the current value of a Folders field
	Choices []string // for Choice
	Help    string
	Applies Applies
}

// field describes one setting: how to read it from a Config.
type field struct {
	Field
	get func(c config.Config) any // string, int64, int, float64, bool, config.Duration or []string
}

// table is every setting the window edits, in the order it shows them.
// Other config keys (added by other features) go here as one row each.
var table = []field{
	{Field{Key: "default_image", Label: "Image of a new sandbox", Group: "Sandboxes", Kind: Text,
		Help: "The Docker image a sandbox starts from when the assistant names none; Docker must have it (Sandtray builds its own)."},
		func(c config.Config) any { return c.DefaultImage }},
	{Field{Key: "limits.memory_mb", Label: "Memory of a new sandbox (MB)", Group: "Sandboxes", Kind: Int,
		Help: "What a sandbox gets unless the assistant asks for more; no swap beyond it."},
		func(c config.Config) any { return c.Limits.MemoryMB }},
	{Field{Key: "limits.max_memory_mb", Label: "Most memory an assistant may ask for (MB)", Group: "Sandboxes", Kind: Int,
		Help: "A bigger request is refused."},
		func(c config.Config) any { return c.Limits.MaxMemoryMB }},
	{Field{Key: "limits.cpus", Label: "CPU cores of a new sandbox", Group: "Sandboxes", Kind: Number,
		Help: "e.g. 1 or 0.5 of a core."},
		func(c config.Config) any { return c.Limits.CPUs }},
	{Field{Key: "limits.max_cpus", Label: "Most CPU cores an assistant may ask for", Group: "Sandboxes", Kind: Number,
		Help: "A bigger request is refused."},
		func(c config.Config) any { return c.Limits.MaxCPUs }},
	{Field{Key: "limits.exec_timeout", Label: "Time limit of a command", Group: "Sandboxes", Kind: Duration,
		Help: `A call is stopped after it unless the assistant asks for longer, e.g. "30 s", "2 min".`},
		func(c config.Config) any { return c.Limits.ExecTimeout }},
	{Field{Key: "limits.disk_mb", Label: "Disk a sandbox may fill (MB)", Group: "Sandboxes", Kind: Int,
		Help: "The files it may add to its image; 0: no limit."},
		func(c config.Config) any { return c.Limits.DiskMB }},
	{Field{Key: "limits.max_committed_mb", Label: "Disk of committed images (MB)", Group: "Sandboxes", Kind: Int,
		Help: "What the images of commits and forks may take together; a commit beyond it is refused."},
		func(c config.Config) any { return c.Limits.CommittedMB }},
	{Field{Key: "sandbox.profile", Label: "Security profile of a new sandbox", Group: "Sandboxes", Kind: Choice,
		Choices: []string{config.ProfileStandard, config.ProfileStrict},
		Help:    `"strict": read-only root, size-limited workdir and /tmp, a non-root user.`},
		func(c config.Config) any { return c.Sandbox.Profile }},
	{Field{Key: "sandbox.network", Label: "Network of a new sandbox", Group: "Network", Kind: Choice, Choices: []string{"none", "egress", "bridge"},
		Help: `"none": off unless a sandbox asks; "egress": through the egress gate ([egress] rules); "bridge": the whole network.`},
		func(c config.Config) any { return c.Sandbox.Network }},
	{Field{Key: "sandbox.allow_network", Label: "Let sandboxes use the bridge network", Group: "Network", Kind: Bool,
		Help: "The whole network, unfiltered. Off (the default): a request for network \"bridge\" is refused; \"egress\" goes through the gate. Sandtray builds its own image either way."},
		func(c config.Config) any { return c.Sandbox.AllowNetwork }},
	{Field{Key: "egress.ask", Label: "Ask me about hosts no rule allows", Group: "Network", Kind: Bool,
		Help: "An egress sandbox's connection to a host no rule allows waits for your answer (a dialog); off: refused."},
		func(c config.Config) any { return c.Egress.Ask }},
	{Field{Key: "egress.ask_timeout", Label: "Refuse an unanswered host after", Group: "Network", Kind: Duration,
		Help: "How long such a connection waits for your answer, e.g. 60 s."},
		func(c config.Config) any { return c.Egress.AskTimeout }},
	{Field{Key: "host.allowed_roots", Label: "Folders assistants may copy to and from", Group: "Host folders", Kind: Folders,
		Help: "Assistants may copy files to and from these folders only."},
		func(c config.Config) any { return c.Host.AllowedRoots }},
	{Field{Key: "pool.size", Label: "Sandboxes kept started per image", Group: "Warm pool", Kind: Int,
		Help: "Sandboxes kept started so a new one answers at once; 0: no pool."},
		func(c config.Config) any { return c.Pool.Size }},
	{Field{Key: "http.listen", Label: "Serve MCP over HTTP at", Group: "HTTP endpoint", Kind: Text,
		Help: "MCP over HTTP at host:port, e.g. 127.0.0.1:8765 (token: sandtray token); empty: off."},
		func(c config.Config) any { return c.HTTP.Listen }},
}

// text renders a value as the window shows it.
func text(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case int:
		return strconv.Itoa(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	case config.Duration:
		return duration.Text(v.Duration) // "1 min", not Go's "1m0s"
	}
	panic(fmt.Sprintf("settings: no text for %T", v))
}

// literal turns what the person typed into the TOML value for kind, or
// says what is wrong with it.
func literal(f Field, value string, list []string) (string, error) {
	v := strings.TrimSpace(value)
	switch f.Kind {
	case Int:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return "", fmt.Errorf("%s must be a whole number", f.Key)
		}
		return strconv.FormatInt(n, 10), nil
	case Number:
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return "", fmt.Errorf("%s must be a number such as 1 or 0.5", f.Key)
		}
		s := strconv.FormatFloat(n, 'f', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0" // a TOML float needs a point
		}
		return s, nil
	case Duration:
		d, err := duration.Parse(v)
		if err != nil {
			return "", fmt.Errorf(`%s must be a duration such as "30 s" or "10 min"`, f.Key)
		}
		return tomlString(duration.Go(d)), nil
	case Bool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return "", fmt.Errorf("%s must be true or false", f.Key)
		}
		return strconv.FormatBool(b), nil
	case Folders:
		parts := make([]string, len(list))
		for i, p := range list {
			parts[i] = tomlString(p)
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	}
	return tomlString(value), nil // Text and Choice: exactly what was typed
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
