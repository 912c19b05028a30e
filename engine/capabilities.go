package engine

import "github.com/sandtray/sandtray/engine/runtime"

// Capabilities is what the engine's container runtime can do of its
// optional parts (found once, at New): the MCP server leaves out the tools
// needing one it lacks, and the app greys out those actions, saying why.
// The engine's own calls that need one refuse with the same why.
func (e *Engine) Capabilities() runtime.Capabilities { return e.caps }
