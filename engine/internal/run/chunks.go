package run

// chunks holds appended bytes in blocks that never move once made, so
// growing copies nothing and what is allocated is exactly what a Budget
// granted. Blocks double from firstChunk to maxChunk.
type chunks struct {
	blocks [][]byte
	n      int64 // bytes held
	alloc  int64 // bytes allocated
}

const (
	firstChunk = 1 << 10
	maxChunk   = 64 << 10
)

// room is what the last block can still take.
func (c *chunks) room() int {
	if len(c.blocks) == 0 {
		return 0
	}
	last := c.blocks[len(c.blocks)-1]
	return cap(last) - len(last)
}

// nextSize is the size of the next block, so that at most limit bytes are
// allocated in all; 0 once they are.
func (c *chunks) nextSize(limit int64) int64 {
	size := int64(maxChunk)
	if n := len(c.blocks); n < 7 {
		size = firstChunk << max(n-1, 0) // 1, 1, 2, ... 32 KiB: 64 KiB in all, then whole blocks
	}
	return max(min(size, limit-c.alloc), 0)
}

// grow adds a block of size bytes.
func (c *chunks) grow(size int64) {
	c.blocks = append(c.blocks, make([]byte, 0, size))
	c.alloc += size
}

// fill appends what the last block takes of p and says how much.
func (c *chunks) fill(p []byte) int {
	n := min(c.room(), len(p))
	if n > 0 {
		last := &c.blocks[len(c.blocks)-1]
		*last = append(*last, p[:n]...)
		c.n += int64(n)
	}
	return n
}

// copyAt copies the bytes held from off into dst, and says how many.
func (c *chunks) copyAt(dst []byte, off int64) int {
	done := 0
	for _, b := range c.blocks {
		if done == len(dst) {
			break
		}
		if off >= int64(len(b)) {
			off -= int64(len(b))
			continue
		}
		done += copy(dst[done:], b[off:])
		off = 0
	}
	return done
}

// free lets the blocks be collected.
func (c *chunks) free() { *c = chunks{} }
