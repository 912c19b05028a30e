package sandbox

import (
	"io/fs"
	"time"
)

// CreateRequest asks for a new sandbox. Zero fields take the configured
// defaults (image per language, limits, network none, ephemeral).
type CreateRequest struct {
	Image      string
	Language   string
	Name       string
	Persistent bool
	Network    string
	MemoryMB   int64
	CPUs       float64
	Env        map[string]string
	GPUs       string // "" for the configured default, "all", or a count such as "1"
}

// Progress reports the advance of a long operation such as an image pull.
// Total is 0 when unknown. It must not block.
type Progress func(current, total float64, message string)

// CommandRequest runs a shell command (via /bin/sh -c) in a sandbox.
type CommandRequest struct {
	Command    string
	Workdir    string // relative to the sandbox workdir unless absolute
	Env        map[string]string
	Stdin      string
	Timeout    time.Duration // 0: the configured default; capped at the configured maximum
	Background bool          // start as a job and return its id at once
	// Wait is how long to wait before a run still going becomes a job
	// (0: DefaultWait; capped at the configured maximum timeout).
	Wait time.Duration
	// Progress, when set, receives output as it arrives, while the caller
	// waits. It must not block.
	Progress Progress
}

// DefaultWait is how long an execute call waits before a run still going
// continues as a background job: under the minute after which clients give up.
const DefaultWait = 45 * time.Second

// CodeRequest runs a snippet of source code in a sandbox.
type CodeRequest struct {
	Code       string
	Language   string // "" means python
	Timeout    time.Duration
	Background bool
	Reset      bool // start a fresh kernel (python, bash, javascript)
	Wait       time.Duration
	Progress   Progress
}

// ExecOutcome is what an execute call returns: the result, or a job id when
// the work was started in the background.
type ExecOutcome struct {
	SandboxID string
	Result    ExecResult
	JobID     string // set when the run continues as a job; Result then holds the output so far
	// NextOffset is where job_status should read from for output not in Result.
	NextOffset int64
}

// FileContent is (part of) a file read from a sandbox.
type FileContent struct {
	Path      string // absolute path inside the sandbox
	Data      []byte
	Size      int64 // whole file size
	Truncated bool  // Data stops before the end of the file
}

// Listing is a directory listing inside a sandbox.
type Listing struct {
	Path    string      // absolute path of the listed directory
	Entries []FileEntry // sorted by path; depth-first order for trees
}

// CopyResult counts what a copy between host and sandbox moved.
type CopyResult struct {
	Path    string   // destination: a sandbox path or a host path
	Files   int      `json:"files"`
	Bytes   int64    `json:"bytes"`
	Skipped []string `json:"skipped,omitempty"` // entries refused (symlinks, devices) with reasons
}

// Diff is how a sandbox's filesystem differs from its image.
type Diff struct {
	Added   []string `json:"added"`
	Changed []string `json:"changed"`
	Deleted []string `json:"deleted"`
}

// Job states.
const (
	JobRunning  = "running"
	JobExited   = "exited"
	JobStopped  = "stopped"   // stopped by job_stop, or as Error says (a restore, its sandbox's removal)
	JobTimedOut = "timed_out" // killed at its timeout
	JobFailed   = "failed"    // could not run (sandbox vanished, daemon error)
)

// JobStatus is the state of a background job and its combined output from an
// offset, so a caller can poll incrementally.
type JobStatus struct {
	ID         string
	SandboxID  string
	Status     string
	Output     string // combined stdout and stderr from the requested offset
	NextOffset int64  // pass as since on the next call
	// OutputDropped names the output between since and NextOffset that the
	// job printed but the engine did not keep, and why; "" when none.
	OutputDropped string
	ExitCode      *int   // set once the job has ended
	Error         string // why a failed job failed, or what stopped a stopped one other than job_stop
	Started       time.Time
	Duration      time.Duration
}

// WriteRequest writes one file into a sandbox.
type WriteRequest struct {
	Path string
	Data []byte
	Mode fs.FileMode // 0 means 0644
}
