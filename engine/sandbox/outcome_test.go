package sandbox

import (
	"testing"
	"time"
)

// TestOutcomeRender: each ending is told once, in order, one line each,
// after whatever the call printed.
func TestOutcomeRender(t *testing.T) {
	tests := []struct {
		name   string
		o      Outcome
		stderr string
		want   string
	}{
		{"finished says nothing", Outcome{}, "err", "err"},
		{"exec timeout", Outcome{End: TimedOut, Timeout: time.Second}, "partial",
			"partial\n[sandtray: timed out after 1s; the process group was killed]"},
		{"kernel interrupted is not also a killed group", Outcome{End: TimedOut, Kernel: KernelInterrupted, Timeout: time.Second}, "",
			"[sandtray: timed out after 1s; the code was interrupted (SIGINT) and the kernel kept its state]"},
		{"fresh kernel, then its exit", Outcome{FreshKernel: true, Kernel: KernelExited, KernelExit: 4, Language: "python"}, "x\n",
			"x\n[sandtray: the previous python kernel of this sandbox had stopped, so this ran in a fresh one: state from earlier calls is gone]\n" +
				"[sandtray: the python kernel exited with code 4: its state (variables, imports, functions) is lost, and the next call starts a fresh kernel]"},
		{"memory", Outcome{End: KilledForMemory, MemoryMB: 64}, "",
			"[sandtray: killed for memory: the sandbox's 64 MB limit was reached; use less memory, or create a sandbox with a larger memory_mb]"},
		{"timeout that restarted the sandbox", Outcome{End: TimedOut, Timeout: time.Second, SandboxRestarted: true}, "",
			"[sandtray: timed out after 1s; the process group was killed]\n[sandtray: the sandbox had no process left to stop the call with (its pids limit was reached), so it was restarted; its files are kept]"},
		{"disk", Outcome{End: DiskFull, DiskMB: 70, DiskLimitMB: 64}, "",
			"[sandtray: stopped: the sandbox's files grew to 70 MB, over its disk limit of 64 MB (limits.disk_mb); delete files to make room, the ones written so far are kept]"},
	}
	for _, tt := range tests {
		if got := tt.o.Render(tt.stderr); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
