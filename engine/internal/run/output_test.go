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
