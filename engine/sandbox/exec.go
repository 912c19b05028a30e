package sandbox

import "time"

// ExecResult is the outcome of running a command or code in a sandbox. Stdout
// and Stderr are capped per stream for the model; the activity log keeps more.
type ExecResult struct {
	Stdout    string        `json:"stdout"`
	Stderr    string        `json:"stderr"`
	ExitCode  int           `json:"exit_code"`
	Duration  time.Duration `json:"-"`
	TimedOut  bool          `json:"timed_out"`
	Truncated bool          `json:"truncated"`
	// KernelRestarted is set when the code ran in a fresh kernel because the
	// previous one had died or been killed: its variables and imports are gone.
	KernelRestarted bool `json:"kernel_restarted,omitempty"`
	// Images are the image files the code wrote to the outputs folder.
	Images []Image `json:"-"`
	// Outcome is how the call ended; its notes end Stderr once rendered.
	Outcome Outcome `json:"-"`
}

// Image is an image file a run wrote to its sandbox's outputs folder.
type Image struct {
	Path    string // absolute path inside the sandbox
	MIME    string // image/png, image/jpeg, image/gif or image/svg+xml
	Size    int64  // the file's size
	Data    []byte // the file's bytes; empty when Skipped
	Skipped string // why Data is empty (too large, unreadable)
}

// Activity is one entry of a sandbox's activity log: a tool call that touched it.
type Activity struct {
	Time     time.Time `json:"time"`
	Tool     string    `json:"tool"`
	Client   string    `json:"client,omitempty"`
	Language string    `json:"language,omitempty"`
	Input    string    `json:"input,omitempty"` // the command, code or path, capped
	ExitCode *int      `json:"exit_code,omitempty"`
	Duration int64     `json:"duration_ms"`
	Stdout   string    `json:"stdout,omitempty"`
	Stderr   string    `json:"stderr,omitempty"`
	TimedOut bool      `json:"timed_out,omitempty"`
	Error    string    `json:"error,omitempty"`
}

// FileEntry is one entry of a directory listing inside a sandbox.
type FileEntry struct {
	Path    string    `json:"path"` // relative to the listed directory
	Type    string    `json:"type"` // "file", "dir", "symlink" or "other"
	Size    int64     `json:"size"`
	Mode    string    `json:"mode"` // octal permission bits, e.g. "0644"
	ModTime time.Time `json:"mod_time"`
	Target  string    `json:"target,omitempty"` // a symlink's target
}
