package run

import "testing"

func TestCapBuffer(t *testing.T) {
	c := &CapBuffer{max: 8}
	c.Write([]byte("hello "))
	c.Write([]byte("wörld and more"))
	got, cut := c.Head(8)
	if got != "hello w" || !cut || c.total != 21 {
		t.Errorf("head = %q cut %v total %d; want the split ö dropped, cut, 21 counted", got, cut, c.total)
	}
	if got, cut := (&CapBuffer{max: 10}).Head(10); got != "" || cut {
		t.Errorf("empty: %q %v", got, cut)
	}
}

// TestJobOutputPages: a caller paging with next_offset gets every byte once,
// in order, with no UTF-8 sequence split between two pages.
func TestJobOutputPages(t *testing.T) {
	j := &JobOutput{max: 1 << 20}
	j.Write([]byte("héllo wörld, "))
	j.Write([]byte("ü"[:1])) // the job has written half of a character so far
	first, next := j.Since(0, 0)
	if first != "héllo wörld, " || next != int64(len("héllo wörld, ")) {
		t.Fatalf("since(0) = %q, %d; want the whole characters only", first, next)
	}
	j.Write([]byte("ü"[1:] + " done"))
	var got string
	for page := 0; page < 10; page++ {
		s, n := j.Since(next, 4) // small pages split inside "ü"
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

func TestOOMKills(t *testing.T) {
	tests := []struct {
		text string
		want int64
		ok   bool
	}{
		{"oom_kill_disable 0\nunder_oom 0\noom_kill 3\n", 3, true}, // cgroup v1
		{"low 0\nhigh 0\nmax 2\noom 2\noom_kill 2\n", 2, true},     // cgroup v2
		{"nothing here\n", 0, false},
	}
	for _, tt := range tests {
		if n, ok := oomKills([]byte(tt.text)); n != tt.want || ok != tt.ok {
			t.Errorf("oomKills(%q) = %d, %v; want %d, %v", tt.text, n, ok, tt.want, tt.ok)
		}
	}
}
