package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// noKillExec refuses the exec that kills a timed-out call's processes, as
// Docker does when a fork bomb has taken every pid of the sandbox.
type noKillExec struct{ runtime.Runtime }

func (d noKillExec) Exec(ctx context.Context, id string, o runtime.ExecOptions) (int, error) {
	if len(o.Cmd) == 3 && strings.HasSuffix(o.Cmd[2], "echo swept") {
		return 126, errors.New("OCI runtime exec failed: resource temporarily unavailable")
	}
	return d.Runtime.Exec(ctx, id, o)
}

// TestTimeoutRestartsASandboxThatCannotBeSwept: when even the kill exec
// cannot start, the sandbox is restarted, which ends what the call left
// running; its files are kept and the result says so.
func TestTimeoutRestartsASandboxThatCannotBeSwept(t *testing.T) {
	te := newTestEngineOn(t, func(d runtime.Runtime) runtime.Runtime { return noKillExec{d} })
	id := te.create(t, sandbox.CreateRequest{}).ID
	te.command(t, id, "echo kept > /workspace/file")
	out, err := te.ExecCommand(context.Background(), te.owner, id, sandbox.CommandRequest{Command: "sleep 600", Timeout: 1e9})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Result.TimedOut || !strings.Contains(out.Result.Stderr, "so it was restarted; its files are kept") {
		t.Fatalf("the result does not say the sandbox was restarted: %+v", out.Result)
	}
	if res := te.command(t, id, "cat /workspace/file; ps -eo args= | grep -c '^sleep 600' || true"); res.Stdout != "kept\n0\n" {
		t.Errorf("after the restart: %q, want the file kept and no sleep 600 left", res.Stdout)
	}
}
