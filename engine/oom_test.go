package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestMemoryBombIsNamed: code killed by the OOM killer gets a result that
// says so, whether it ran in a kernel (python) or as a command; a plain
// kill -9 does not.
func TestMemoryBombIsNamed(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{MemoryMB: 64}).ID
	bomb := "a = []\nwhile True:\n    a.append(bytearray(10 ** 7))\n"
	out, err := te.ExecCode(ctx, te.owner, id, sandbox.CodeRequest{Code: bomb, Timeout: 30 * time.Second})
	if err != nil || !strings.Contains(out.Result.Stderr, "killed for memory") {
		t.Errorf("python memory bomb: %+v, %v; want a note that it was killed for memory", out.Result, err)
	}
	cmd := sandbox.CommandRequest{Command: "python3 -c 'a = []\nwhile True: a.append(bytearray(10 ** 7))'", Timeout: 30 * time.Second}
	out, err = te.ExecCommand(ctx, te.owner, id, cmd)
	if err != nil || out.Result.ExitCode != 137 || !strings.Contains(out.Result.Stderr, "killed for memory") {
		t.Errorf("command memory bomb: %+v, %v", out.Result, err)
	}
	if r := te.command(t, id, "sh -c 'kill -9 $$'"); strings.Contains(r.Stderr, "memory") {
		t.Errorf("a plain kill -9 was reported as a memory kill: %+v", r)
	}
}
