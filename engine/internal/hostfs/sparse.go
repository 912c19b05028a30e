package hostfs

import (
	"bytes"
	"errors"
	"io"
	"os"
)

// holeBlock is the size of the blocks of zeros skipped rather than written.
const holeBlock = 4096

// sparseChunk is how much a SparseWriter gathers before it writes: its
// writes start at multiples of it, so the blocks it skips are the file
// system's own.
const sparseChunk = 256 << 10

var zeroBlock = make([]byte, holeBlock)

// writeSparse copies r into f, seeking over every block of zeros so it
// stays a hole, and sets f's size at the end: a sparse file in a sandbox
// takes on the host only the space of what it holds.
func writeSparse(f *os.File, r io.Reader) (int64, error) {
	w := NewSparseWriter(f, nil)
	_, err := io.Copy(w, r)
	return w.Size(), errors.Join(err, w.Flush())
}

// SparseWriter writes a new file front to back, as writeSparse does: every
// block of zeros stays a hole. Before it writes a run of data, it asks
// take for that many bytes of the host's disk; a take that fails stops it
// (Write returns that error), so a caller bounds what a stream it does not
// trust (what a sandbox sends) may take of the disk, whatever its size.
// Call Flush at the end.
type SparseWriter struct {
	f    *os.File
	take func(n int64) error
	buf  []byte
	size int64 // bytes written, holes included
	data int64 // bytes of data written
	err  error
}

// NewSparseWriter writes into f, at its start; take may be nil (no bound).
func NewSparseWriter(f *os.File, take func(n int64) error) *SparseWriter {
	return &SparseWriter{f: f, take: take, buf: make([]byte, 0, sparseChunk)}
}

// Write gathers p and writes each full chunk.
func (w *SparseWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 && w.err == nil {
		m := copy(w.buf[len(w.buf):cap(w.buf)], p)
		w.buf, p, n = w.buf[:len(w.buf)+m], p[m:], n+m
		if len(w.buf) == cap(w.buf) {
			w.err = w.writeBuf()
		}
	}
	return n, w.err
}

// Flush writes what is gathered and sets the file's size (a hole at its
// end is a size, not a write).
func (w *SparseWriter) Flush() error {
	if w.err == nil {
		w.err = w.writeBuf()
	}
	if w.err != nil {
		return w.err
	}
	return w.f.Truncate(w.size)
}

// Size is the file's size so far, holes included.
func (w *SparseWriter) Size() int64 { return w.size + int64(len(w.buf)) }

// Data is what the file takes of the disk so far: its runs of data.
func (w *SparseWriter) Data() int64 { return w.data }

func (w *SparseWriter) writeBuf() error {
	b := w.buf
	w.buf = w.buf[:0]
	for len(b) > 0 {
		end := min(holeBlock, len(b))
		if bytes.Equal(b[:end], zeroBlock[:end]) {
			if _, err := w.f.Seek(int64(end), io.SeekCurrent); err != nil {
				return err
			}
			w.size += int64(end)
			b = b[end:]
			continue
		}
		run := end
		for run < len(b) && !bytes.Equal(b[run:min(run+holeBlock, len(b))], zeroBlock[:min(holeBlock, len(b)-run)]) {
			run = min(run+holeBlock, len(b))
		}
		if w.take != nil {
			if err := w.take(int64(run)); err != nil {
				return err
			}
		}
		if _, err := w.f.Write(b[:run]); err != nil {
			return err
		}
		w.size += int64(run)
		w.data += int64(run)
		b = b[run:]
	}
	return nil
}
