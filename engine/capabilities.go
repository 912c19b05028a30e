package engine

import (
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Capabilities is what the engine's container runtime can do of its
// optional parts (found once, at New): the MCP server leaves out the tools
// needing one it lacks, and the app greys out those actions, saying why.
// The engine's own calls that need one refuse with the same why.
func (e *Engine) Capabilities() runtime.Capabilities { return e.caps }

// runtimeStatus is the daemon's status, with the runtime's name and what it
// cannot do, for the app.
func (e *Engine) runtimeStatus() sandbox.DockerStatus {
	st := e.dockerStatus.Status()
	st.Runtime = e.caps.Runtime
	for _, x := range e.caps.Lacking() {
		if st.Lacks == nil {
			st.Lacks = map[string]string{}
		}
		st.Lacks[string(x)] = e.caps.Why(x)
	}
	return st
}
