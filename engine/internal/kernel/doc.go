// Package kernel keeps the sandboxes' persistent interpreters: one per
// sandbox and language (python, bash, javascript), started with one docker
// exec of the supervisor in kernelsrc/ and kept attached, so that state
// persists between execute_code calls and a warm call costs one round trip.
// The engine and a kernel speak a framed protocol (proto.go) in which
// every byte user code prints travels inside a frame, so no output can pass
// for the end of a run. A sandbox made on demand has its first python
// kernel without an exec: its container's main command is that kernel's
// supervisor, on the container's attachment (MainCommand, StartAttached).
//
// It never sees the engine: the sandbox is a Target the engine implements,
// and a run's output goes to a run.Output.
package kernel
