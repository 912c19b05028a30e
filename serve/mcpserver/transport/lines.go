package transport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mark3labs/mcp-go/mcp"
)

// envelopeSlack is what a JSON-RPC message may carry beyond its arguments.
// A line longer than MaxRequestBytes plus this slack is refused as it is
// read, without being held in memory; a shorter one reaches the tool, which
// checks its arguments against MaxRequestBytes.
const envelopeSlack = 64 << 10

// lineReader splits a stream into newline-delimited messages of at most max
// bytes.
type lineReader struct {
	r   *bufio.Reader
	max int
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// oversizeError reports a line over the limit, with what could be learnt of
// it while it was skipped.
type oversizeError struct {
	size   int64
	id     json.RawMessage // the top-level "id", if it was a request
	method string
}

func (e *oversizeError) Error() string {
	return fmt.Sprintf("message of %d bytes is over the limit", e.size)
}

// next returns the next line, without its newline and surrounding space. A
// line over the limit is consumed and reported as an *oversizeError.
func (lr *lineReader) next() ([]byte, error) {
	var line []byte
	var skipped *envelopeSniffer
	var size int64
	for {
		chunk, err := lr.r.ReadSlice('\n')
		size += int64(len(chunk))
		if skipped == nil && len(line)+len(chunk) > lr.max {
			skipped = &envelopeSniffer{}
			skipped.feed(line)
			line = nil
		}
		if skipped != nil {
			skipped.feed(chunk)
		} else {
			line = append(line, chunk...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && size > 0:
			// The last line may lack its newline; EOF comes with the next call.
		case err != nil:
			return nil, err
		}
		if skipped != nil {
			return nil, &oversizeError{size: size, id: skipped.id, method: skipped.method}
		}
		return bytes.TrimSpace(line), nil
	}
}

// oversizeReply answers a message that was too long to read with msg. A
// tool call gets a tool error, so the model learns the limit; any other
// request gets a JSON-RPC error. A notification gets nothing.
func oversizeReply(e *oversizeError, msg string) json.RawMessage {
	if len(e.id) == 0 || string(e.id) == "null" {
		return nil
	}
	if e.method != string(mcp.MethodToolsCall) {
		return errorReply(e.id, mcp.INVALID_REQUEST, msg)
	}
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": mcp.JSONRPC_VERSION,
		"id":      e.id,
		"result": map[string]any{
			"resultType": mcp.ResultTypeComplete,
			"content":    []mcp.Content{mcp.NewTextContent(msg)},
			"isError":    true,
		},
	})
	return body
}

// envelopeSniffer scans a JSON object as a stream, keeping only its top-level
// "id" and "method", so that a message too large to hold can still be
// answered.
type envelopeSniffer struct {
	depth    int
	inString bool
	escaped  bool
	atKey    bool   // the next top-level string is a key
	key      string // the current top-level key
	token    []byte // the current top-level token, capped
	id       json.RawMessage
	method   string
}

const maxSniffedToken = 256

func (s *envelopeSniffer) feed(p []byte) {
	for _, c := range p {
		s.scan(c)
	}
}

func (s *envelopeSniffer) scan(c byte) {
	if s.inString {
		s.keep(c)
		switch {
		case s.escaped:
			s.escaped = false
		case c == '\\':
			s.escaped = true
		case c == '"':
			s.inString = false
			if s.depth == 1 {
				s.endToken()
			}
		}
		return
	}
	switch c {
	case '"':
		s.inString = true
		s.keep(c)
	case '{', '[':
		s.depth++
		s.atKey = s.depth == 1
	case '}', ']':
		if s.depth == 1 {
			s.endToken()
		}
		s.depth--
	case ':':
		if s.depth == 1 {
			s.atKey = false
		}
	case ',':
		if s.depth == 1 {
			s.endToken()
			s.atKey = true
		}
	case ' ', '\t', '\r', '\n':
	default:
		s.keep(c)
	}
}

// keep adds c to the current top-level token.
func (s *envelopeSniffer) keep(c byte) {
	if s.depth == 1 && len(s.token) <= maxSniffedToken {
		s.token = append(s.token, c)
	}
}

func (s *envelopeSniffer) endToken() {
	tok := s.token
	s.token = nil
	if len(tok) == 0 || len(tok) > maxSniffedToken {
		return
	}
	if s.atKey {
		_ = json.Unmarshal(tok, &s.key)
		return
	}
	switch s.key {
	case "id":
		if json.Valid(tok) {
			s.id = json.RawMessage(tok)
		}
	case "method":
		_ = json.Unmarshal(tok, &s.method)
	}
	s.key = ""
}
