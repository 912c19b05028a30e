package engine

// CallsRunning counts the tool calls running in sandboxes now, background
// jobs' included: what stopping the engine would cut short (the app's quit
// dialog names it).
func (e *Engine) CallsRunning() int {
	n := 0
	e.reg.Locked(func() {
		for _, b := range e.reg.BoxesLocked() {
			n += len(b.Calls)
		}
	})
	return n
}

// Sessions counts the live MCP sessions (connected assistants).
func (e *Engine) Sessions() int {
	n := 0
	e.reg.Locked(func() { n = e.reg.LiveSessionsLocked() })
	return n
}
