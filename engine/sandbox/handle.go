package sandbox

import "context"

// Handle is one sandbox as the packages under engine/internal see it: which
// container it is, and the few things they may ask of the engine about it.
// The engine's registry provides it (engine's boxTarget); the packages never
// call the engine by name.
type Handle interface {
	// ID is the container's id; Name the sandbox's name, for messages.
	ID() string
	Name() string
	// Workdir is where code runs and relative paths start ("" for /).
	Workdir() string
	// User is who runs code and owns what the tools write: sandbox.user,
	// "" for the image's user.
	User() string
	// EnsureRunning starts the sandbox when it is stopped, and waits while
	// it is paused.
	EnsureRunning(ctx context.Context) error
	// MarkStopped records that the runtime found the sandbox stopped behind
	// the engine's back, and reports whether it was: false when the engine
	// stops it itself (stop_sandbox in flight) or already knows it stopped,
	// which a call that the stop cut must not undo by starting it again.
	MarkStopped() bool
	// Gone turns a "no such container" into the engine's answer (the
	// container was removed behind its back); other errors pass.
	Gone(err error) error
	// WaitExecs returns once nothing holds the sandbox's new processes out
	// (an install's network window), or when ctx ends.
	WaitExecs(ctx context.Context) error
}
