package hostfs

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestSparseWriterAsksBeforeItWrites: a stream of a 64 MiB hole and 1 MiB
// of data asks take for the data alone, whatever sizes the writes come in;
// a take that refuses stops the copy before the data it refused is on the
// disk.
func TestSparseWriterAsksBeforeItWrites(t *testing.T) {
	data := make([]byte, 1<<20)
	rand.Read(data)
	stream := func() io.Reader { return io.MultiReader(bytes.NewReader(make([]byte, 64<<20)), bytes.NewReader(data)) }
	f, err := os.Create(filepath.Join(t.TempDir(), "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var asked int64
	w := NewSparseWriter(f, func(n int64) error { asked += n; return nil })
	if _, err := io.CopyBuffer(w, stream(), make([]byte, 777)); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if asked != 1<<20 || w.Data() != 1<<20 || w.Size() != 65<<20 {
		t.Errorf("asked for %d bytes, data %d, size %d; want 1 MiB of data in a 65 MiB file", asked, w.Data(), w.Size())
	}
	got, _ := os.ReadFile(f.Name())
	if !bytes.Equal(got[64<<20:], data) || len(got) != 65<<20 {
		t.Errorf("the file does not hold the stream's bytes")
	}

	g, err := os.Create(filepath.Join(t.TempDir(), "b"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	full := errors.New("full")
	w = NewSparseWriter(g, func(n int64) error {
		if asked -= n; asked < 0 {
			return full
		}
		return nil
	})
	asked = 512 << 10
	_, err = io.Copy(w, stream())
	if !errors.Is(err, full) {
		t.Fatalf("a copy past what take allows: %v", err)
	}
	if st, _ := g.Stat(); w.Data() > 512<<10 || st.Size() > 65<<20 {
		t.Errorf("after the refusal: %d bytes of data written, file of %d", w.Data(), st.Size())
	}
}
