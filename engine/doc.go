// Package engine manages Sandtray's sandboxes: hardened Docker containers
// that AI assistants create, run code and commands in, and move files in and
// out of. It owns the container lifecycle (create, adopt on start, stop,
// delete, reap), execution with timeouts that kill the whole process group,
// capped output, the per-sandbox activity log, background jobs, host copies
// confined to the allowed roots, and the snapshots the GUI watches.
//
// The engine speaks to Docker only through engine/internal/docker and reports
// failures classified with the kinds of engine/sandbox.
package engine
