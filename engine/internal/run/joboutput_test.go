package run

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestJobOutputPages: a caller paging with next_offset gets every byte once,
// in order, with no UTF-8 sequence split between two pages.
func TestJobOutputPages(t *testing.T) {
	j := NewJobOutput(1 << 20)
	j.Write([]byte("héllo wörld, "))
	j.Write([]byte("ü"[:1])) // the job has written half of a character so far
	first, next, _ := j.Since(0, 0)
	if first != "héllo wörld, " || next != int64(len("héllo wörld, ")) {
		t.Fatalf("since(0) = %q, %d; want the whole characters only", first, next)
	}
	j.Write([]byte("ü"[1:] + " done"))
	var got string
	for page := 0; page < 10; page++ {
		s, n, _ := j.Since(next, 4) // small pages split inside "ü"
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

// pageAll reads j from 0 in pages of size, as a model would with
// next_offset, and returns the text and every gap it was told of.
func pageAll(t *testing.T, j *JobOutput, size int) (string, []Gap) {
	t.Helper()
	var text strings.Builder
	var gaps []Gap
	var at int64
	for range 10000 {
		s, next, gap := j.Since(at, size)
		text.WriteString(s)
		if gap.To > gap.From {
			gaps = append(gaps, gap)
		}
		if next == at {
			return text.String(), gaps
		}
		at = next
	}
	t.Fatal("paging never ended")
	return "", nil
}

// TestJobOutputSpillsThenDrops: under a budget, output goes to memory, then
// to the spill file, then is dropped; every kept byte reads back in order,
// the dropped ones are named with their offsets and why, and releasing the
// output gives everything back and removes its file.
func TestJobOutputSpillsThenDrops(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spill")
	b := NewBudget(BudgetConfig{Memory: 8 << 10, Disk: 10 << 10, Dir: dir})
	j := newJobOutput(b)
	var want bytes.Buffer
	for i := range 6000 {
		line := strconv.Itoa(i) + "\n"
		want.WriteString(line)
		j.Write([]byte(line))
	}
	mem, disk := b.Used()
	if mem != 8<<10 || disk != 10<<10 {
		t.Errorf("granted %d bytes of memory and %d on disk; want all of both (8 KiB, 10 KiB)", mem, disk)
	}
	got, gaps := pageAll(t, j, 1000)
	kept := int64(18 << 10)
	if got != want.String()[:kept] {
		t.Errorf("read back %d bytes; want the first %d bytes written, in order", len(got), kept)
	}
	if len(gaps) != 1 || gaps[0].From != kept || gaps[0].To != int64(want.Len()) || !strings.Contains(gaps[0].Why, "job-output budget is full") {
		t.Errorf("gaps = %+v; want one from %d to %d saying the budget is full", gaps, kept, want.Len())
	}
	// From inside the dropped part, and past what was read so far.
	if s, next, gap := j.Since(kept+5, 100); s != "" || next != int64(want.Len()) || gap.From != kept+5 {
		t.Errorf("since inside the gap: %q, %d, %+v", s, next, gap)
	}
	if s, next, gap := j.Since(int64(want.Len()), 100); s != "" || next != int64(want.Len()) || gap != (Gap{}) {
		t.Errorf("since the end: %q, %d, %+v; want nothing more", s, next, gap)
	}
	files, _ := os.ReadDir(dir)
	if len(files) != 1 {
		t.Fatalf("spill folder holds %d files, want the job's one", len(files))
	}
	j.Release()
	if mem, disk := b.Used(); mem != 0 || disk != 0 {
		t.Errorf("after release: %d bytes of memory and %d on disk still granted", mem, disk)
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("after release the spill folder holds %v", files)
	}
	b.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the spill folder outlived the budget's Close: %v", err)
	}
}

// TestJobOutputCap: one job keeps at most JobOutputKept bytes however large
// the budget, and a kernel's own count of what it did not send is a gap.
func TestJobOutputCap(t *testing.T) {
	b := NewBudget(BudgetConfig{Memory: 64 << 20})
	j := newJobOutput(b)
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	for range 9 {
		j.Write(chunk)
	}
	if j.Size() != JobOutputKept {
		t.Errorf("kept %d bytes, want %d", j.Size(), JobOutputKept)
	}
	if mem, _ := b.Used(); mem != JobOutputKept {
		t.Errorf("granted %d bytes of memory for %d kept; want exactly what is held", mem, JobOutputKept)
	}
	_, next, gap := j.Since(JobOutputKept-10, 100)
	if next != 9<<20 || gap.From != JobOutputKept || gap.To != 9<<20 || !strings.Contains(gap.Why, "at most 8 MiB") {
		t.Errorf("at the cap: next %d, gap %+v", next, gap)
	}
	j.Lost(100)
	if _, next, gap := j.Since(next, 100); next != 9<<20+100 || gap.From != 9<<20 {
		t.Errorf("after a kernel's lost bytes: next %d, gap %+v", next, gap)
	}
}

// TestBudgetIsShared: one budget bounds every output together, and the
// streams' copies past StreamFree draw on it too, while the model's part
// of each stream never does.
func TestBudgetIsShared(t *testing.T) {
	b := NewBudget(BudgetConfig{Memory: 256 << 10, StreamFree: 32 << 10})
	big := bytes.Repeat([]byte("y"), 1<<20)
	var outs []*Output
	for range 4 {
		o := NewOutput(1<<20, b, nil)
		o.Write(false, big)
		o.Write(true, big)
		outs = append(outs, o)
	}
	held := int64(0)
	for _, o := range outs {
		held += o.stdout.data.alloc + o.stderr.data.alloc + o.combined.mem.alloc
		if out, _ := o.stdout.Head(32 << 10); len(out) != 32<<10 {
			t.Errorf("a full budget shortened the model's part of stdout to %d bytes", len(out))
		}
	}
	free := int64(4 * 2 * (32 << 10))
	if held > 256<<10+free {
		t.Errorf("4 outputs hold %d KiB; want at most the budget (256 KiB) and each stream's free 32 KiB", held>>10)
	}
	if mem, _ := b.Used(); mem != 256<<10 {
		t.Errorf("granted %d KiB, want all 256 KiB of the budget in use", mem>>10)
	}
	for _, o := range outs {
		o.Release()
	}
	if mem, disk := b.Used(); mem != 0 || disk != 0 {
		t.Errorf("after every release: %d bytes of memory, %d on disk granted", mem, disk)
	}
}

// TestSpillDirRemovesStaleFolders: a new engine's spill folder is its own;
// those of engines whose process is gone are removed, not those of live ones.
func TestSpillDirRemovesStaleFolders(t *testing.T) {
	state := t.TempDir()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true command:", err)
	}
	dead := filepath.Join(state, spillRoot, strconv.Itoa(cmd.Process.Pid)+"-ab")
	live := filepath.Join(state, spillRoot, strconv.Itoa(os.Getppid())+"-cd")
	for _, d := range []string{dead, live} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	got := SpillDir(state, "ef")
	if want := filepath.Join(state, spillRoot, strconv.Itoa(os.Getpid())+"-ef"); got != want {
		t.Errorf("SpillDir = %s, want %s", got, want)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the folder of a process that is gone is still there")
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the folder of a live process was removed: %v", err)
	}
}
