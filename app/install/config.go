package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// member is one key and its value, kept as the exact JSON it was read as.
type member struct {
	Key   string
	Value json.RawMessage
}

// object is a JSON object that keeps its members' order and values, so a
// rewritten config differs from the original only where Sandtray's entry is.
type object []member

// get returns the value of the first member named key.
func (o object) get(key string) (json.RawMessage, bool) {
	for _, m := range o {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// set replaces the value of the first member named key, dropping any
// duplicates (JSON readers would let the last win), or appends a new member.
func (o object) set(key string, value json.RawMessage) object {
	out := o[:0:0]
	found := false
	for _, m := range o {
		switch {
		case m.Key != key:
			out = append(out, m)
		case !found:
			out = append(out, member{Key: key, Value: value})
			found = true
		}
	}
	if !found {
		out = append(out, member{Key: key, Value: value})
	}
	return out
}

// MarshalJSON writes the members in order.
func (o object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		key, err := encode(m.Key, "")
		if err != nil {
			return nil, err
		}
		buf.Write(bytes.TrimSpace(key))
		buf.WriteByte(':')
		buf.Write(m.Value)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// parseObject reads a JSON object member by member. The caller has checked
// the input is valid JSON, so errors here mean "not an object".
func parseObject(data []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	o := object{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		o = append(o, member{Key: tok.(string), Value: value})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the object")
	}
	return o, nil
}

// parseConfig validates a whole config file and returns its top-level object.
// An empty file counts as {}. Errors name the file and the line and column.
func parseConfig(path string, data []byte) (object, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return object{}, nil
	}
	var syntax *json.SyntaxError
	if err := json.Unmarshal(data, new(any)); errors.As(err, &syntax) {
		line, col := position(data, syntax.Offset)
		return nil, fmt.Errorf("%s: invalid JSON at line %d, column %d: %v; the file was not changed. "+
			"Fix it, or add the entry by hand (see --print). Comments and trailing commas are not JSON",
			path, line, col, err)
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	o, err := parseObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s: the top level is not a JSON object; the file was not changed", path)
	}
	return o, nil
}

// serverMap returns the object under key in root; a missing or null key
// is an empty map.
func serverMap(path string, root object, key string) (object, error) {
	raw, ok := root.get(key)
	if !ok || string(raw) == "null" {
		return object{}, nil
	}
	servers, err := parseObject(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %q is not a JSON object; the file was not changed", path, key)
	}
	return servers, nil
}

// mergeEntry sets want's members in the existing entry, keeping members the
// user added (such as "env"). It reports whether anything changed.
func mergeEntry(existing json.RawMessage, want object) (object, bool) {
	entry, err := parseObject(existing)
	if existing == nil || err != nil {
		return want, true
	}
	changed := false
	for _, m := range want {
		if old, ok := entry.get(m.Key); !ok || !sameJSON(old, m.Value) {
			entry = entry.set(m.Key, m.Value)
			changed = true
		}
	}
	return entry, changed
}

// sameJSON reports whether a and b are the same JSON up to whitespace.
func sameJSON(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}

// encode renders v as JSON without HTML escaping (so users' strings stay as
// they wrote them), indented by indent when not empty, ending in a newline.
func encode(v any, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// snippet is the JSON a user would merge by hand: the entry under its key.
func snippet(key string, entry object) string {
	servers := object{{Key: ServerName, Value: mustMarshal(entry)}}
	b, _ := encode(object{{Key: key, Value: mustMarshal(servers)}}, "  ")
	return string(b)
}

// position turns a byte offset from encoding/json into a 1-based line and
// column of the offending byte.
func position(data []byte, offset int64) (line, col int) {
	at := max(0, min(int(offset)-1, len(data)))
	before := data[:at]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = at - bytes.LastIndexByte(before, '\n')
	return line, col
}

// mustMarshal renders an object, which only holds valid JSON and cannot fail.
func mustMarshal(o object) json.RawMessage {
	b, err := o.MarshalJSON()
	if err != nil {
		panic(err)
	}
	return b
}
