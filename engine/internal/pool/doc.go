// Package pool is the engine's warm pool: containers created and started
// ahead of time with the default spec, their python kernel running, so that
// create_sandbox (and the first execute_code of a session) skips Docker's
// create and start and the kernel's start.
//
// Learning and the budget. The pool keeps Config.Size spares of every
// configured image and of every image a sandbox was made from within
// Config.Idle, and as many as the most creates of an image within a minute
// (a burst) while that burst is within Idle. All spares together stay
// within Config.MaxTotal containers and Config.MemoryMB of memory, as
// measured on each new spare; configured images are served first, then the
// most recently used. Up to Config.Parallel spares are made at once. Spares
// an image no longer wants (idle, over the budget) are removed, and so are
// the spares of an image deleted or untagged, or whose reference now names
// another image (Docker's image events).
//
// Naming and labels. Docker labels are immutable, so a pooled container is
// created with the labels it keeps for life: managed, image, created (the
// fill time), spec (the default spec, without a name or language), the
// engine's own labels, and io.sandtray.pool=<engine instance>. It has no name
// label. It is named Prefix+<generated name>, and its hostname is that
// generated name. Handing it out renames it to the sandbox prefix plus
// <name>: the generated name, or the name the request asked for (the
// hostname stays the generated one). That rename is the commit point: a
// container whose name still starts with Prefix is in a pool and never a
// sandbox, whatever its labels say, so a restart removes it as a crash
// leftover instead of adopting it. A handed-out container is adopted like
// any other; its name comes from the container name, and its creation time
// and language, which its labels cannot know, from the engine's state file.
//
// Matching. A request takes from the pool when its spec equals the spare's
// in everything Docker cannot change on a running container: network, pids
// limit, workdir, runtime, user and capabilities (Adjustable). Memory and
// CPU limits are changed in place (ContainerUpdate) before the rename; env
// is applied by the engine to every process it starts. Name, language and
// persistence do not matter: the name is applied by the rename and the other
// two live in the state file.
//
// The pool in force. Warm holds the Pool made for the engine's configuration,
// replaces it whole when that changes, hands a spare out as a sandbox
// (CreateFromPool) and starts a new sandbox's kernel (WarmSoon); the engine
// embeds it.
//
// The pool never sees the engine: it gets what it needs as a Host, a small
// interface the engine implements.
package pool
