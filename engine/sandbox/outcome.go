package sandbox

import (
	"fmt"
	"strings"
	"time"
)

// End is how a call ended, as far as its caller is concerned.
type End int

// The ends of a call. A call that ran to its end, whatever its exit code,
// is Finished.
const (
	Finished        End = iota
	TimedOut            // its timeout stopped it
	KilledForMemory     // the sandbox's memory limit was reached
	SandboxStopped      // the sandbox stopped under it (killed or stopped from outside)
	DiskFull            // it grew the sandbox's files past limits.disk_mb
)

// KernelEnd is what became of the kernel a call ran on.
type KernelEnd int

// What became of a call's kernel. KernelKept is also the value for a call
// that ran on no kernel.
const (
	KernelKept        KernelEnd = iota
	KernelInterrupted           // the code was interrupted (SIGINT) and stopped; state kept
	KernelKilled                // the code ignored the interrupt: the kernel was killed
	KernelExited                // the interpreter exited
	KernelLost                  // the kernel broke or vanished mid-run
)

// Outcome is a call's ending, decided once by the engine and rendered for
// the model, the activity log and the GUI by Notes. The zero Outcome is a
// call that ran to its end with nothing to say.
type Outcome struct {
	End    End
	Kernel KernelEnd

	Timeout  time.Duration // TimedOut: the timeout that passed
	Language string        // the kernel's language, when the call ran on one
	// FreshKernel: the call ran in a fresh kernel because the previous one
	// had died: its state is gone.
	FreshKernel bool
	// SandboxRestarted: no process was left to stop the call with (a fork
	// bomb filled the pids limit), so the sandbox was restarted.
	SandboxRestarted bool
	KernelExit       int    // KernelExited: the interpreter's exit status
	KernelCause      string // KernelLost: why
	MemoryMB         int64  // KilledForMemory: the sandbox's limit
	// WholeSandbox: the memory kill stopped the whole sandbox (gVisor).
	WholeSandbox        bool
	DiskMB, DiskLimitMB int64 // DiskFull: what the files took, and the limit
}

// KernelGrace is how long interrupted code has to stop before its kernel
// is killed, and how long a killed kernel has to exit before it is killed
// from outside.
const KernelGrace = 2 * time.Second

// Notes are the sentences from Sandtray that end a call's stderr, in order.
func (o Outcome) Notes() []string {
	const lost = "its state (variables, imports, functions) is lost, and the next call starts a fresh kernel"
	var notes []string
	add := func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
	if o.FreshKernel {
		add("the previous %s kernel of this sandbox had stopped, so this ran in a fresh one: state from earlier calls is gone", o.Language)
	}
	switch o.Kernel {
	case KernelExited:
		add("the %s kernel exited with code %d: %s", o.Language, o.KernelExit, lost)
	case KernelLost:
		add("the %s kernel stopped unexpectedly (%s): %s", o.Language, o.KernelCause, lost)
	case KernelInterrupted:
		add("timed out after %s; the code was interrupted (SIGINT) and the kernel kept its state", o.Timeout)
	case KernelKilled:
		add("timed out after %s and did not stop within %s of an interrupt, so the kernel was killed: %s", o.Timeout, KernelGrace, lost)
	}
	switch o.End {
	case TimedOut:
		if o.Kernel == KernelKept {
			add("timed out after %s; the process group was killed", o.Timeout)
		}
	case KilledForMemory:
		if o.WholeSandbox {
			add("killed for memory: the sandbox's %d MB limit was reached and the whole sandbox was stopped; "+
				"it starts again on next use, with its files; use less memory, or create a sandbox with a larger memory_mb", o.MemoryMB)
		} else {
			add("killed for memory: the sandbox's %d MB limit was reached; use less memory, or create a sandbox with a larger memory_mb", o.MemoryMB)
		}
	case SandboxStopped:
		add("the sandbox stopped while this ran (killed or stopped from outside the call); it starts again on next use, with its files")
	case DiskFull:
		add("stopped: the sandbox's files grew to %d MB, over its disk limit of %d MB (limits.disk_mb); "+
			"delete files to make room, the ones written so far are kept", o.DiskMB, o.DiskLimitMB)
	}
	if o.SandboxRestarted {
		add("the sandbox had no process left to stop the call with (its pids limit was reached), so it was restarted; its files are kept")
	}
	return notes
}

// Render appends the outcome's notes to stderr, one "[sandtray: …]" line
// each, starting on a line of their own.
func (o Outcome) Render(stderr string) string {
	for _, n := range o.Notes() {
		if stderr != "" && !strings.HasSuffix(stderr, "\n") {
			stderr += "\n"
		}
		stderr += "[sandtray: " + n + "]"
	}
	return stderr
}
