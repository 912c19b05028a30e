package imagebuild

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Package is one binary package of a mirror's Packages index: what the
// resolver and the downloader need of it.
type Package struct {
	Name       string
	Version    string
	Priority   string // "required", "important", …
	Essential  bool
	Depends    [][]dep // clauses of alternatives: "a | b, c" is [[a b] [c]]
	PreDepends [][]dep
	Provides   []string // virtual names
	Filename   string   // the .deb's path under the mirror's root
	SHA256     string
	Size       int64
}

// dep is one alternative of a dependency clause; its version constraint
// and architecture qualifier are dropped: one suite has one version of a
// name, so the constraint holds of what there is.
type dep struct{ name string }

// Index is a Packages index by name, with the providers of each virtual
// name.
type Index struct {
	byName    map[string]*Package
	providers map[string][]string // virtual name -> real names, in index order
}

// Get returns the package called name, if the index has one.
func (ix *Index) Get(name string) (*Package, bool) {
	p, ok := ix.byName[name]
	return p, ok
}

// Len is how many packages the index has.
func (ix *Index) Len() int { return len(ix.byName) }

// ParseIndex reads a Packages index (RFC 822-style paragraphs, one per
// package). Where a name appears twice, the later paragraph wins.
func ParseIndex(r io.Reader) (*Index, error) {
	ix := &Index{byName: map[string]*Package{}, providers: map[string][]string{}}
	err := paragraphs(r, func(f map[string]string) error {
		p := &Package{Name: f["Package"], Version: f["Version"], Priority: f["Priority"],
			Essential: f["Essential"] == "yes", Filename: f["Filename"], SHA256: f["SHA256"]}
		if p.Name == "" || p.Filename == "" {
			return nil // not a binary package's paragraph
		}
		if s := f["Size"]; s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return fmt.Errorf("package %s: size %q: %w", p.Name, s, err)
			}
			p.Size = n
		}
		p.Depends, p.PreDepends = parseDeps(f["Depends"]), parseDeps(f["Pre-Depends"])
		for _, clause := range parseDeps(f["Provides"]) {
			for _, d := range clause {
				p.Provides = append(p.Provides, d.name)
			}
		}
		if _, seen := ix.byName[p.Name]; !seen {
			for _, v := range p.Provides {
				ix.providers[v] = append(ix.providers[v], p.Name)
			}
		}
		ix.byName[p.Name] = p
		return nil
	})
	return ix, err
}

// paragraphs calls fn with each paragraph's fields; continuation lines
// (starting with a space) are joined to their field with a newline.
func paragraphs(r io.Reader, fn func(map[string]string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	fields, last := map[string]string{}, ""
	flush := func() error {
		if len(fields) == 0 {
			return nil
		}
		err := fn(fields)
		fields, last = map[string]string{}, ""
		return err
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			if err := flush(); err != nil {
				return err
			}
		case line[0] == ' ' || line[0] == '\t':
			if last != "" {
				fields[last] += "\n" + strings.TrimSpace(line)
			}
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				return fmt.Errorf("malformed index line %q", line)
			}
			last = k
			fields[k] = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read index: %w", err)
	}
	return flush()
}

// parseDeps reads a Depends-style field: "a (>= 1), b:any | c [amd64]".
func parseDeps(s string) [][]dep {
	var out [][]dep
	for _, clause := range strings.Split(s, ",") {
		var alts []dep
		for _, alt := range strings.Split(clause, "|") {
			name := strings.TrimSpace(alt)
			if i := strings.IndexAny(name, " ([<"); i >= 0 {
				name = name[:i]
			}
			name, _, _ = strings.Cut(name, ":")
			if name != "" {
				alts = append(alts, dep{name: name})
			}
		}
		if len(alts) > 0 {
			out = append(out, alts)
		}
	}
	return out
}

// releaseHashes reads the SHA256 section of a Release file: path -> hash
// and size.
func releaseHashes(release []byte) map[string]fileHash {
	out := map[string]fileHash{}
	in := false
	for _, line := range bytes.Split(release, []byte("\n")) {
		s := string(line)
		if !strings.HasPrefix(s, " ") {
			in = strings.HasPrefix(s, "SHA256:")
			continue
		}
		if !in {
			continue
		}
		f := strings.Fields(s)
		if len(f) != 3 {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err == nil {
			out[f[2]] = fileHash{sha256: f[0], size: n}
		}
	}
	return out
}

type fileHash struct {
	sha256 string
	size   int64
}
