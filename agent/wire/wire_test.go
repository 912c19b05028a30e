package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// TestReadFrameRefusesAnOversizeFrameBeforeReadingIt: a header claiming a
// gigabyte is refused at once, as a protocol error, with nothing read or
// allocated for it.
func TestReadFrameRefusesAnOversizeFrameBeforeReadingIt(t *testing.T) {
	hdr := []byte{KindStdout, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(hdr[1:], 1<<30)
	r := &countingReader{r: io.MultiReader(bytes.NewReader(hdr), zeros{})}
	_, _, err := ReadFrame(r, MaxReply, nil)
	if !errors.Is(err, ErrFrameTooLarge) || !errors.Is(err, ErrProtocol) {
		t.Fatalf("err = %v, want ErrFrameTooLarge, a protocol error", err)
	}
	if r.n != 5 {
		t.Errorf("read %d bytes of it, want only its 5-byte header", r.n)
	}
}

func TestReadJSONRefusesTheWrongKindAndBadJSON(t *testing.T) {
	var v Reply
	if err := ReadJSON(bytes.NewReader(AppendFrame(nil, KindStdout, []byte("{}"))), KindReply, MaxReply, &v); !errors.Is(err, ErrProtocol) {
		t.Errorf("a stdout frame where a reply was due: %v, want ErrProtocol", err)
	}
	if err := ReadJSON(bytes.NewReader(AppendFrame(nil, KindReply, []byte("{nope"))), KindReply, MaxReply, &v); !errors.Is(err, ErrProtocol) {
		t.Errorf("a reply that is not JSON: %v, want ErrProtocol", err)
	}
	if err := ReadJSON(bytes.NewReader(AppendFrame(nil, KindReply, []byte("{}"))[:6]), KindReply, MaxReply, &v); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a frame cut short: %v, want io.ErrUnexpectedEOF", err)
	}
}

func TestFramesRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, KindRequest, Request{Op: OpSpawn, Argv: []string{"sh"}}); err != nil {
		t.Fatal(err)
	}
	var req Request
	if err := ReadJSON(&buf, KindRequest, MaxRequest, &req); err != nil || req.Op != OpSpawn || req.Argv[0] != "sh" {
		t.Errorf("round trip: %+v, %v", req, err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
