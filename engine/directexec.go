package engine

import (
	"bytes"
	"context"
	"fmt"

	"github.com/sandtray/sandtray/engine/internal/docker"
)

// DirectExec runs cmd in the sandbox ref with one plain `docker exec` and
// returns its stdout and exit code: what other sandbox tools do for every
// call. It is the baseline `sandtray bench` measures the engine against, so
// it skips everything the engine adds (kernels, the process-group wrapper,
// timeouts, output caps, the activity log); callers bound it with ctx.
func (e *Engine) DirectExec(ctx context.Context, ref string, cmd []string) (string, int, error) {
	e.mu.Lock()
	b, err := e.lookup(ref) // not acquire: its state save would slow the baseline down
	e.mu.Unlock()
	if err != nil {
		return "", 0, err
	}
	var out, errOut bytes.Buffer
	code, err := e.docker.Exec(ctx, b.id, docker.ExecOptions{Cmd: cmd, Stdout: &out, Stderr: &errOut})
	if err != nil {
		return "", 0, fmt.Errorf("exec in sandbox %s: %w", b.name, err)
	}
	return out.String(), code, nil
}
