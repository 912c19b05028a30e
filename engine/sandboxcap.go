package engine

import (
	"fmt"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// reserveSandbox holds a place for one new sandbox under
// limits.max_sandboxes, counting every sandbox the engine has (persistent and
// stopped ones too) and the creates under way, or refuses with a sentence
// that names the key and what to do. done gives the place back once the
// create has registered its sandbox (or failed).
func (e *Engine) reserveSandbox() (done func(), err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	limit := e.cfg.Limits.MaxSandboxes
	if limit > 0 && len(e.boxes)+e.creating >= limit {
		return nil, fmt.Errorf("Sandtray already has %d sandboxes, the most limits.max_sandboxes allows (persistent and stopped ones count); "+
			"delete one you no longer need with delete_sandbox (list_sandboxes shows them), reuse one by its sandbox_id, or ask the user to raise limits.max_sandboxes in config.toml: %w",
			len(e.boxes), sandbox.ErrTooLarge)
	}
	e.creating++
	return func() {
		e.mu.Lock()
		e.creating--
		e.mu.Unlock()
	}, nil
}
