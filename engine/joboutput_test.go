package engine

import "testing"

// TestJobOutputPages: a caller paging with next_offset gets every byte once,
// in order, with no UTF-8 sequence split between two pages.
func TestJobOutputPages(t *testing.T) {
	j := &jobOutput{max: 1 << 20}
	j.Write([]byte("héllo wörld, "))
	j.Write([]byte("ü"[:1])) // the job has written half of a character so far
	first, next := j.since(0, 0)
	if first != "héllo wörld, " || next != int64(len("héllo wörld, ")) {
		t.Fatalf("since(0) = %q, %d; want the whole characters only", first, next)
	}
	j.Write([]byte("ü"[1:] + " done"))
	var got string
	for page := 0; page < 10; page++ {
		s, n := j.since(next, 4) // small pages split inside "ü"
		got += s
		if n == next {
			break
		}
		next = n
	}
	if got != "ü done" {
		t.Errorf("paged output = %q, want %q", got, "ü done")
	}
}
