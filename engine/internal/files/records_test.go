package files

import (
	"bytes"
	"fmt"
	"testing"
)

func TestRecordsWriterStopsAtTheCap(t *testing.T) {
	w := recordsWriter{max: 100}
	for i := range 100_000 {
		rec := fmt.Sprintf("f\t0\t644\t0\t\tfile%d\x00", i)
		// Written in pieces that split records, as a stream arrives.
		if _, err := w.Write([]byte(rec[:5])); err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(rec[5:]))
	}
	if got := bytes.Count(w.Bytes(), []byte{0}); got != 100 {
		t.Errorf("kept %d records, want 100", got)
	}
	if len(parseListing(w.Bytes())) != 100 || w.Len() > 100*40 {
		t.Errorf("kept %d bytes for 100 records", w.Len())
	}
}
