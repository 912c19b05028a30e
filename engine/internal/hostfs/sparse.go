package hostfs

import (
	"bytes"
	"errors"
	"io"
	"os"
)

// holeBlock is the size of the blocks of zeros skipped rather than written.
const holeBlock = 4096

var zeroBlock = make([]byte, holeBlock)

// writeSparse copies r into f, seeking over every block of zeros so it
// stays a hole, and sets f's size at the end: a sparse file in a sandbox
// takes on the host only the space of what it holds.
func writeSparse(f *os.File, r io.Reader) (int64, error) {
	buf := make([]byte, 256<<10)
	var n int64
	for {
		m, err := io.ReadFull(r, buf)
		if werr := writeBlocks(f, buf[:m]); werr != nil {
			return n, werr
		}
		n += int64(m)
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return n, f.Truncate(n)
		}
		if err != nil {
			return n, err
		}
	}
}

// writeBlocks writes b's runs of non-zero blocks and seeks over the rest.
func writeBlocks(f *os.File, b []byte) error {
	for len(b) > 0 {
		end := min(holeBlock, len(b))
		if bytes.Equal(b[:end], zeroBlock[:end]) {
			if _, err := f.Seek(int64(end), io.SeekCurrent); err != nil {
				return err
			}
			b = b[end:]
			continue
		}
		run := end
		for run < len(b) && !bytes.Equal(b[run:min(run+holeBlock, len(b))], zeroBlock[:min(holeBlock, len(b)-run)]) {
			run = min(run+holeBlock, len(b))
		}
		if _, err := f.Write(b[:run]); err != nil {
			return err
		}
		b = b[run:]
	}
	return nil
}
