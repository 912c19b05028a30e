package run

import (
	"io"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/internal/safetext"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// CapBuffer keeps the first max bytes written to it and counts the rest, so
// an exec that prints forever costs bounded memory. Under a Budget, what it
// holds past the budget's StreamFree needs the budget's grant; once one is
// refused, the rest is counted only.
type CapBuffer struct {
	max     int
	data    chunks
	total   int64
	budget  *Budget // nil: no grant needed
	charged int64   // granted by budget
	full    bool    // the budget refused a grant
}

func (c *CapBuffer) Write(p []byte) (int, error) {
	c.total += int64(len(p))
	want := p[:min(len(p), max(c.max-int(c.data.n), 0))]
	for n := 0; n < len(want) && !c.full; {
		if c.data.room() == 0 {
			size := c.data.nextSize(int64(c.max))
			if !c.charge(size) {
				// Refused: what is left of the free part still grows.
				if size = min(c.budget.streamFree, int64(c.max)) - c.data.alloc; size <= 0 {
					c.full = true
					break
				}
			}
			c.data.grow(size)
		}
		n += c.data.fill(want[n:])
	}
	return len(p), nil
}

// charge asks the budget for what a new block of size takes past StreamFree.
func (c *CapBuffer) charge(size int64) bool {
	if c.budget == nil {
		return true
	}
	free := c.budget.streamFree
	need := max(c.data.alloc+size-free, 0) - max(c.data.alloc-free, 0)
	if need > 0 && !c.budget.takeMemory(need) {
		return false
	}
	c.charged += need
	return true
}

// release gives the buffer's grant back; it holds nothing after.
func (c *CapBuffer) release() {
	c.budget.giveMemory(c.charged)
	c.charged, c.full = 0, true
	c.data.free()
}

// Head returns at most n bytes as valid UTF-8, and whether anything was cut.
func (c *CapBuffer) Head(n int) (string, bool) {
	b := make([]byte, min(int64(n), c.data.n))
	c.data.copyAt(b, 0)
	return safetext.Clean(b), c.total > int64(n)
}

// NewCapBuffer returns a CapBuffer that keeps max bytes.
func NewCapBuffer(max int) *CapBuffer { return &CapBuffer{max: max} }

// String is what the buffer kept.
func (c *CapBuffer) String() string {
	b := make([]byte, c.data.n)
	c.data.copyAt(b, 0)
	return string(b)
}

// Output is one run's output as it arrives: each stream capped for the
// result and the activity log, and, when the run may become a job, the
// combined stream job_status reads. The exec or kernel writes it while the
// caller may take a snapshot (a run turning into a job), so it locks.
type Output struct {
	mu             sync.Mutex
	stdout, stderr CapBuffer
	combined       *JobOutput    // nil unless the run may become a job
	progress       *progressPump // nil without a Progress callback
	extra          io.Writer     // optional: also receives both streams (install's progress)
}

// NewOutput returns the output of a run that keeps keep bytes of each
// stream. With a budget, the run may become a job: it also keeps the
// combined stream, and both are held under the budget; Release gives
// them back.
func NewOutput(keep int, budget *Budget, progress sandbox.Progress) *Output {
	c := &Output{stdout: CapBuffer{max: keep, budget: budget}, stderr: CapBuffer{max: keep, budget: budget}}
	if budget != nil {
		c.combined = newJobOutput(budget)
	}
	if progress != nil {
		c.progress = startProgress(progress)
	}
	return c
}

// Combined is the output job_status reads, or nil when the run may not
// become a job.
func (c *Output) Combined() *JobOutput { return c.combined }

// streamWriter is one stream of a Output.
type streamWriter struct {
	c   *Output
	err bool
}

func (w streamWriter) Write(p []byte) (int, error) {
	w.c.Write(w.err, p)
	return len(p), nil
}

func (c *Output) stdoutWriter() io.Writer { return streamWriter{c: c} }
func (c *Output) stderrWriter() io.Writer { return streamWriter{c: c, err: true} }

func (c *Output) Write(stderr bool, p []byte) {
	c.mu.Lock()
	if stderr {
		c.stderr.Write(p)
	} else {
		c.stdout.Write(p)
	}
	if c.combined != nil {
		c.combined.Write(p)
	}
	if c.extra != nil {
		c.extra.Write(p)
	}
	pump := c.progress
	c.mu.Unlock()
	if pump != nil {
		pump.add(p)
	}
}

// Dropped counts output the kernel counted but did not send.
func (c *Output) Dropped(stdout, stderr int64) {
	c.mu.Lock()
	c.stdout.total += stdout
	c.stderr.total += stderr
	if c.combined != nil {
		c.combined.Lost(stdout + stderr)
	}
	c.mu.Unlock()
}

// ReleaseStreams gives back what the two streams' copies hold under the
// budget, once the run's result is taken: the call ended, or the job it
// became did. The combined output stays: its job, or Release, frees it.
func (c *Output) ReleaseStreams() {
	c.mu.Lock()
	c.stdout.release()
	c.stderr.release()
	c.mu.Unlock()
}

// Release is ReleaseStreams and the combined output's release, for a call
// that ended without becoming a job.
func (c *Output) Release() {
	c.ReleaseStreams()
	if c.combined != nil {
		c.combined.Release()
	}
}

// Result fills r's output from what arrived so far: each stream capped at
// limit for the model, and at keep for the activity log.
func (c *Output) Result(r sandbox.ExecResult, limit, keep int) Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	var cutOut, cutErr bool
	r.Stdout, cutOut = c.stdout.Head(limit)
	r.Stderr, cutErr = c.stderr.Head(limit)
	r.Truncated = cutOut || cutErr
	logOut, _ := c.stdout.Head(keep)
	logErr, _ := c.stderr.Head(keep)
	return Result{Result: r, LogOut: logOut, LogErr: logErr}
}

// Snapshot is the output so far, each stream capped at limit, and the
// length of the combined output it covers, taken together.
func (c *Output) Snapshot(limit int) (sandbox.ExecResult, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var r sandbox.ExecResult
	var cutOut, cutErr bool
	r.Stdout, cutOut = c.stdout.Head(limit)
	r.Stderr, cutErr = c.stderr.Head(limit)
	r.Truncated = cutOut || cutErr
	var offset int64
	if c.combined != nil {
		offset = c.combined.End()
	}
	return r, offset
}

// StopProgress sends what is pending and stops reporting: the caller that
// gave the Progress is about to return.
func (c *Output) StopProgress() {
	c.mu.Lock()
	pump := c.progress
	c.progress = nil
	c.mu.Unlock()
	if pump != nil {
		pump.stop()
	}
}

// Progress notifications carry at most progressChunk bytes of new output,
// at most one per progressInterval: a flood must not flood the client.
const (
	progressChunk    = 4 << 10
	progressInterval = 100 * time.Millisecond
)

// progressPump reports output to a Progress from its own goroutine, so a
// slow client never blocks the exec that produces it.
type progressPump struct {
	fn   sandbox.Progress
	kick chan struct{}
	quit chan struct{}
	done chan struct{}

	mu      sync.Mutex
	pending []byte
	seen    int64
}

func startProgress(fn sandbox.Progress) *progressPump {
	p := &progressPump{fn: fn, kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go p.run()
	return p
}

func (p *progressPump) add(b []byte) {
	p.mu.Lock()
	p.seen += int64(len(b))
	if room := progressChunk - len(p.pending); room > 0 {
		p.pending = append(p.pending, b[:min(room, len(b))]...)
	}
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// run reports pending output when some arrives, then rests for an interval;
// it returns after a last report once stop is called.
func (p *progressPump) run() {
	defer close(p.done)
	for {
		select {
		case <-p.kick:
			p.flush()
		case <-p.quit:
			p.flush()
			return
		}
		select {
		case <-time.After(progressInterval):
		case <-p.quit:
			p.flush()
			return
		}
	}
}

func (p *progressPump) flush() {
	p.mu.Lock()
	text, seen := p.pending, p.seen
	p.pending = nil
	p.mu.Unlock()
	if len(text) > 0 {
		p.fn(float64(seen), 0, safetext.Clean(text))
	}
}

func (p *progressPump) stop() {
	close(p.quit)
	<-p.done
}
