package settings

import (
	"strings"
)

// stmt is one key = value line (or lines, for a multi-line array) of a
// TOML document, or a table header.
type stmt struct {
	header     bool
	array      bool   // [[header]]
	path       string // the full dotted path: the table, or table + key
	start, end int    // the statement's first byte and the end of its line
	valStart   int    // key = value: where the value starts
	valEnd     int    // and ends (before trailing spaces and any comment)
}

// scan splits doc into statements. It understands what config.toml can
// hold: comments, [tables], [[arrays]], bare, quoted and dotted keys, and
// values spanning lines (arrays, multi-line strings). It does not check
// the document: LoadConfig does that afterwards.
func scan(doc string) []stmt {
	var out []stmt
	table := ""
	for i := 0; i < len(doc); {
		lineEnd := strings.IndexByte(doc[i:], '\n')
		if lineEnd < 0 {
			lineEnd = len(doc)
		} else {
			lineEnd += i
		}
		line := strings.TrimSpace(doc[i:lineEnd])
		switch {
		case line == "" || line[0] == '#':
			i = lineEnd + 1
		case line[0] == '[':
			array := strings.HasPrefix(line, "[[")
			name := strings.TrimLeft(line, "[")
			if j := strings.IndexByte(name, ']'); j >= 0 {
				name = name[:j]
			}
			table = joinPath(splitKey(name))
			out = append(out, stmt{header: true, array: array, path: table, start: i, end: lineEnd})
			i = lineEnd + 1
		default:
			eq := keyEnd(doc, i)
			if eq >= len(doc) || doc[eq] != '=' {
				i = lineEnd + 1 // not a key = value line; LoadConfig will say so
				continue
			}
			key := joinPath(splitKey(doc[i:eq]))
			if table != "" {
				key = table + "." + key
			}
			vs := eq + 1
			for vs < len(doc) && (doc[vs] == ' ' || doc[vs] == '\t') {
				vs++
			}
			ve := valueEnd(doc, vs)
			end := strings.IndexByte(doc[ve:], '\n')
			if end < 0 {
				end = len(doc)
			} else {
				end += ve
			}
			out = append(out, stmt{path: key, start: i, end: end, valStart: vs, valEnd: ve})
			i = end + 1
		}
	}
	return out
}

// keyEnd returns the index of the "=" ending the key that starts at i, or
// of the first character that cannot be part of a key.
func keyEnd(doc string, i int) int {
	for i < len(doc) {
		switch c := doc[i]; c {
		case '"', '\'':
			i = stringEnd(doc, i)
		case '=', '\n':
			return i
		default:
			i++
		}
	}
	return i
}

// valueEnd returns the end of the value starting at i: the newline or "#"
// that ends it outside strings and brackets, less trailing blanks.
func valueEnd(doc string, i int) int {
	depth := 0
	for i < len(doc) {
		switch c := doc[i]; {
		case c == '"' || c == '\'':
			i = stringEnd(doc, i)
			continue
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		case c == '#':
			if depth <= 0 {
				return trimEnd(doc, i)
			}
			for i < len(doc) && doc[i] != '\n' { // a comment inside an array
				i++
			}
			continue
		case c == '\n' && depth <= 0:
			return trimEnd(doc, i)
		}
		i++
	}
	return trimEnd(doc, i)
}

// stringEnd returns the index just past the string (basic, literal, or
// either multi-line form) that starts at i.
func stringEnd(doc string, i int) int {
	q := doc[i]
	delim := string(q)
	if strings.HasPrefix(doc[i:], strings.Repeat(delim, 3)) {
		delim = strings.Repeat(delim, 3)
	}
	j := i + len(delim)
	for j < len(doc) {
		if q == '"' && doc[j] == '\\' {
			j += 2
			continue
		}
		if strings.HasPrefix(doc[j:], delim) {
			j += len(delim)
			for len(delim) == 3 && j < len(doc) && doc[j] == q { // """a"""" ends at the last quotes
				j++
			}
			return j
		}
		if len(delim) == 1 && doc[j] == '\n' {
			return j // unterminated: stop at the line's end
		}
		j++
	}
	return j
}

func trimEnd(doc string, i int) int {
	for i > 0 && (doc[i-1] == ' ' || doc[i-1] == '\t' || doc[i-1] == '\r') {
		i--
	}
	return i
}

// splitKey splits a dotted key, unquoting quoted parts.
func splitKey(k string) []string {
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(k); i++ {
		switch c := k[i]; c {
		case '"', '\'':
			j := stringEnd(k, i)
			inner := k[i+1 : max(i+1, j-1)]
			if c == '"' {
				inner = strings.ReplaceAll(strings.ReplaceAll(inner, `\"`, `"`), `\\`, `\`)
			}
			cur.WriteString(inner)
			i = j - 1
		case '.':
			parts = append(parts, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(parts, strings.TrimSpace(cur.String()))
}

func joinPath(parts []string) string { return strings.Join(parts, ".") }

// setKey returns doc with key (a full dotted path such as "limits.cpus")
// set to the TOML value lit. An existing value is replaced in place, keeping
// its line's comment; a missing key goes right under its table's header,
// or into a new table at the end; a top-level key goes above the first
// table.
func setKey(doc, key, lit string) string {
	stmts := scan(doc)
	for _, s := range stmts {
		if !s.header && s.path == key {
			return doc[:s.valStart] + lit + doc[s.valEnd:]
		}
	}
	table, name := "", key
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		table, name = key[:i], key[i+1:]
	}
	line := name + " = " + lit + "\n"
	for _, s := range stmts {
		if !s.header {
			continue
		}
		if table == "" { // above the first table
			return doc[:s.start] + line + doc[s.start:]
		}
		if s.path == table && !s.array {
			at := min(s.end+1, len(doc))
			if s.end == len(doc) {
				return doc + "\n" + line
			}
			return doc[:at] + line + doc[at:]
		}
	}
	if doc != "" && !strings.HasSuffix(doc, "\n") {
		doc += "\n"
	}
	if table == "" {
		return doc + line
	}
	if doc != "" {
		doc += "\n"
	}
	return doc + "[" + table + "]\n" + line
}
