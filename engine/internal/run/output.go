package run

import (
	"bytes"
	"io"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/internal/safetext"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// CapBuffer keeps the first max bytes written to it and counts the rest, so
// an exec that prints forever costs bounded memory.
type CapBuffer struct {
	max   int
	buf   bytes.Buffer
	total int64
}

func (c *CapBuffer) Write(p []byte) (int, error) {
	c.total += int64(len(p))
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// Head returns at most n bytes as valid UTF-8, and whether anything was cut.
func (c *CapBuffer) Head(n int) (string, bool) {
	b := c.buf.Bytes()
	cut := c.total > int64(n)
	if len(b) > n {
		b = b[:n]
	}
	return safetext.Clean(b), cut
}

// JobOutputKept caps a background job's combined output held for job_status.
const JobOutputKept = 8 << 20

// NewCapBuffer returns a CapBuffer that keeps max bytes.
func NewCapBuffer(max int) *CapBuffer { return &CapBuffer{max: max} }

// String is what the buffer kept.
func (c *CapBuffer) String() string { return c.buf.String() }

// JobOutput is a background job's combined output, readable from an offset
// while the job still writes it. It keeps up to max bytes; later output is
// counted but dropped.
type JobOutput struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	total int64
}

// NewJobOutput returns a JobOutput that keeps max bytes.
func NewJobOutput(max int) *JobOutput { return &JobOutput{max: max} }

func (j *JobOutput) Write(p []byte) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.total += int64(len(p))
	if room := j.max - len(j.buf); room > 0 {
		j.buf = append(j.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// Since returns up to limit bytes of output from offset (all when limit <= 0)
// and the offset to ask from next time. It stops before a UTF-8 sequence that
// is not whole yet, so the next call returns it whole instead of losing it.
func (j *JobOutput) Since(offset int64, limit int) (string, int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if offset < 0 || offset > int64(len(j.buf)) {
		offset = int64(len(j.buf))
	}
	chunk := j.buf[offset:]
	if limit > 0 && len(chunk) > limit {
		chunk = chunk[:limit]
	}
	chunk = chunk[:safetext.WholeRunes(chunk)]
	return safetext.Clean(chunk), offset + int64(len(chunk))
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

func NewOutput(keep int, job bool, progress sandbox.Progress) *Output {
	c := &Output{stdout: CapBuffer{max: keep}, stderr: CapBuffer{max: keep}}
	if job {
		c.combined = &JobOutput{max: JobOutputKept}
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
	c.mu.Unlock()
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
		_, offset = c.combined.Since(-1, 0)
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
