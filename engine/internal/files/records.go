package files

import "bytes"

// maxRecordBytes bounds one find record (a path is at most 4096 bytes).
const maxRecordBytes = 8 << 10

// recordsWriter keeps the first max NUL-terminated records written to it and
// drops the rest, so a folder of a million entries costs a listing no more
// memory than its cap. It never fails: the writer (find, through Docker)
// runs to its end either way.
type recordsWriter struct {
	max int
	n   int // records kept
	buf bytes.Buffer
}

func (w *recordsWriter) Write(p []byte) (int, error) {
	for rest := p; len(rest) > 0 && w.n < w.max; {
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			if w.buf.Len()+len(rest) <= w.max*maxRecordBytes {
				w.buf.Write(rest)
			}
			break
		}
		w.buf.Write(rest[:i+1])
		w.n++
		rest = rest[i+1:]
	}
	return len(p), nil
}

// Len and Bytes are those of the records kept.
func (w *recordsWriter) Len() int      { return w.buf.Len() }
func (w *recordsWriter) Bytes() []byte { return w.buf.Bytes() }
