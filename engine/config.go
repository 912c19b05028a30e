package engine

import (
	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/runtime"
)

// settings is the configuration an engine runs with (package engine/config's),
// with what the engine adds to it; configuredImages is
// config.Config.ConfiguredImages under the name the engine's callers use.
type settings struct {
	config.Config
	labels map[string]string // added to every container (tests tag theirs)
	engine string            // the engine's identity, sandbox.LabelEngine (statedir.Store.Identity)
	agent  *runtime.Agent    // the agent every sandbox gets (agent.go)
}

func (s *settings) configuredImages() []string { return s.ConfiguredImages() }

// cfg is the configuration in force. Reconfigure replaces it whole; a
// caller that reads several values together reads them from one cfg().
func (e *Engine) cfg() *settings { return e.conf.Load() }
