package settings

import (
	"errors"
	"os"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/sandtray/sandtray/engine/config"
)

// Problem is what is wrong with a config file, for a person to fix: the
// loader's error, the line it is on, and for a key the loader does not
// know, the key it most likely meant.
type Problem struct {
	Path    string
	Err     error  // config.Load's
	Line    int    // 1-based; 0 when no one line is at fault
	Key     string // the unknown key, "" for another error
	Suggest string // the valid key closest to Key ("" when none is close)
	Text    string // the file, up to maxProblemText bytes
}

// maxProblemText bounds the file a Problem carries to show.
const maxProblemText = 64 << 10

// Diagnose loads the config file at path as the engine does, and returns
// the problem when it refuses it (ok is false when the file is fine).
func Diagnose(path string) (p Problem, ok bool) {
	_, err := config.Load(path)
	if err == nil {
		return Problem{}, false
	}
	p = Problem{Path: path, Err: err}
	data, rerr := os.ReadFile(path)
	if rerr != nil {
		return p, true
	}
	p.Text = string(data[:min(len(data), maxProblemText)])
	var perr toml.ParseError
	if errors.As(err, &perr) {
		p.Line = perr.Position.Line
		return p, true
	}
	if key := unknownKey(data); key != "" {
		p.Key, p.Suggest = key, Suggest(key)
	}
	p.Line = faultyLine(data)
	return p, true
}

// unknownKey is the first key of the file the config does not know, as
// the loader finds it.
func unknownKey(data []byte) string {
	cfg := config.Default()
	md, err := toml.Decode(string(data), &cfg)
	if err != nil {
		return ""
	}
	if u := md.Undecoded(); len(u) > 0 {
		return u[0].String()
	}
	return ""
}

// faultyLine finds the line the loader refuses: the first one without
// which the file loads. The file is small; each line is tried once, in a
// copy.
func faultyLine(data []byte) int {
	lines := strings.Split(string(data), "\n")
	tmp, err := os.CreateTemp("", "sandtray-config-*.toml")
	if err != nil {
		return 0
	}
	defer os.Remove(tmp.Name())
	tmp.Close()
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "[") {
			continue
		}
		without := strings.Join(append(append([]string{}, lines[:i]...), lines[i+1:]...), "\n")
		if os.WriteFile(tmp.Name(), []byte(without), 0o600) != nil {
			return 0
		}
		if _, err := config.Load(tmp.Name()); err == nil {
			return i + 1
		}
	}
	return 0
}

// Keys are every key config.toml may set, dotted ("limits.memory_mb").
func Keys() []string {
	var out []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if f.Anonymous && name == "" {
				walk(f.Type, prefix)
				continue
			}
			if name == "" {
				name = f.Name
			}
			ft := f.Type
			if ft.Kind() == reflect.Struct && ft.PkgPath() == reflect.TypeFor[config.Config]().PkgPath() && ft.Name() != "Duration" {
				walk(ft, prefix+name+".")
				continue
			}
			out = append(out, prefix+name)
		}
	}
	walk(reflect.TypeFor[config.Config](), "")
	return out
}

// Suggest is the valid key key most likely meant, or "": a key of the same
// table whose last part is close ("limits.memory": limits.memory_mb), or
// else a key close as a whole ("limit.memory_mb").
func Suggest(key string) string {
	table, name := "", key
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		table, name = key[:i+1], key[i+1:]
	}
	best, bestD := "", max(2, len(name)/2)+1
	for _, k := range Keys() {
		if rest, ok := strings.CutPrefix(k, table); ok && !strings.Contains(rest, ".") {
			if d := distance(name, rest); d < bestD {
				best, bestD = k, d
			}
		}
	}
	if best != "" {
		return best
	}
	bestD = len(key)/4 + 1
	for _, k := range Keys() {
		if d := distance(key, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
