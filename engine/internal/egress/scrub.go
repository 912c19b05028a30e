package egress

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// What a bound host answers has the values of the secrets put in its
// request scrubbed: wherever it would show a value, the placeholder (or the
// same part of it) is shown instead (F65: an echo that URL-encoded,
// upper-cased, JSON-escaped or cut the value showed it). The gate looks for,
// regardless of case:
//
//   - any run of 8 or more bytes of the value (the value itself, a prefix,
//     any part long enough to guess the rest from);
//   - the value URL-encoded (as a query or a path writes it, or every byte
//     as %XX), JSON-escaped (with and without \/ for /), HTML-escaped, in
//     hex, and in base64 (standard and URL alphabets, at each of the three
//     places it may start in a longer base64 text).
//
// Each is replaced by as many bytes of the placeholder written the same
// way, so lengths hold (a WebSocket's frames, a Content-Length).

// encodings are the forms of a value the scrub looks for besides its runs.
var encodings = []func(v []byte) []string{
	func(v []byte) []string {
		return []string{url.QueryEscape(string(v)), url.PathEscape(string(v)), percentAll(v)}
	},
	jsonForms,
	func(v []byte) []string { return []string{html.EscapeString(string(v)), hex.EncodeToString(v)} },
	func(v []byte) []string { return base64Forms(base64.StdEncoding, v) },
	func(v []byte) []string { return base64Forms(base64.URLEncoding, v) },
}

// scrubMatcher finds what would show the values of phs' secrets.
func scrubMatcher(phs []placeholder) *matcher {
	m := &matcher{fold: true, hold: 4}
	for i, ph := range phs {
		v, p := []byte(ph.s.Value), fit(ph.text, max(len(ph.text), len(ph.s.Value))) // a placeholder is never shorter, but a sandbox's may be
		m.add(&pattern{text: v, repl: p, window: true, swap: i})
		for _, enc := range encodings {
			forms, repls := enc(v), enc(p)
			for k, f := range forms {
				if strings.EqualFold(f, string(v)) || len(f) < keyLen {
					continue // the runs find it
				}
				m.add(&pattern{text: []byte(f), repl: fit(repls[k], len(f)), swap: i})
			}
		}
	}
	return m
}

// fit is s cut, or repeated, to n bytes.
func fit(s string, n int) []byte {
	if s == "" {
		return bytes.Repeat([]byte{'x'}, n)
	}
	return []byte(strings.Repeat(s, n/len(s)+1)[:n])
}

// percentAll is every byte of v as %XX.
func percentAll(v []byte) string {
	var b strings.Builder
	for _, c := range v {
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// jsonForms are v inside a JSON string as encoders write it: Go's (<, >, &
// escaped), one that escapes only what it must, and each with / as \/.
func jsonForms(v []byte) []string {
	goJSON, _ := json.Marshal(string(v))
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	enc.Encode(string(v))
	out := []string{}
	for _, f := range []string{string(goJSON), strings.TrimSpace(plain.String())} {
		f = f[1 : len(f)-1]
		out = append(out, f, strings.ReplaceAll(f, "/", `\/`))
	}
	return out
}

// base64Forms are the parts of enc's encoding of v that are the same
// wherever v starts in a longer text (at each of its three offsets in a
// 3-byte group): the characters made of v's bits alone.
func base64Forms(enc *base64.Encoding, v []byte) []string {
	out := make([]string, 0, 3)
	for k := range 3 {
		buf := make([]byte, k+len(v)+2)
		copy(buf[k:], v)
		s := enc.WithPadding(base64.NoPadding).EncodeToString(buf)
		// Character c is bits 6c to 6c+5: bytes 6c/8 to (6c+5)/8.
		first := (8*k + 5) / 6
		last := (8*(k+len(v)) - 6) / 6
		if first > last {
			out = append(out, "")
			continue
		}
		out = append(out, s[first:last+1])
	}
	return out
}

// scrubResponse puts the placeholders back wherever a bound host's answer
// would show a value: its headers, its body and its trailers.
func scrubResponse(resp *http.Response, m *matcher) {
	if m.empty() {
		return
	}
	scrubHeader(resp.Header, m)
	if resp.Body == nil || resp.Body == http.NoBody {
		return
	}
	resp.Body = &trailerScrub{replacer: newPacedReplacer(resp.Body, m), resp: resp, m: m}
}

// scrubHeader scrubs h's names and values.
func scrubHeader(h http.Header, m *matcher) {
	for k, vs := range h {
		for i, v := range vs {
			vs[i] = m.replaceString(v)
		}
		if nk := m.replaceString(k); nk != k {
			delete(h, k)
			h[nk] = vs
		}
	}
}

// trailerScrub scrubs a body, and the trailers that come with its end.
type trailerScrub struct {
	*replacer
	resp *http.Response
	m    *matcher
}

func (t *trailerScrub) Read(p []byte) (int, error) {
	n, err := t.replacer.Read(p)
	if err == io.EOF {
		scrubHeader(t.resp.Trailer, t.m)
	}
	return n, err
}

// upgraded is the body of a bound host's 101 answer (a WebSocket): what
// the host sends is scrubbed (every replacement is as long as what it
// replaces, so frame lengths hold), what the sandbox sends goes as it is.
type upgraded struct {
	*replacer // of rw
	rw        io.ReadWriteCloser
}

func (u *upgraded) Write(p []byte) (int, error) { return u.rw.Write(p) }
