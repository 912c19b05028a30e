// Package engine manages Sandtray's sandboxes: hardened containers, made
// through the container runtime of engine/runtime, that AI assistants
// create, run code and commands in, and move files in and out of.
//
// The engine package keeps the reaper and the other loops, the snapshots
// the GUI watches, the state dir and the activity log, and composes the
// packages under engine/internal that each own one job, the registry
// first. The tools of network, snapshot, files, capture, jobs, images and
// pool are parts of those packages: the Engine embeds each part's API (an
// interface), so those methods are the engine's, and each reaches the
// sandboxes through a Host of its own (docs/architecture.md):
//
//   - registry: the sandboxes with explicit states, the MCP sessions, the
//     calls' gate and the engine's one lifetime, behind their own lock
//     (the Engine's reg; registry.go here keeps the saves of a sandbox's
//     state, forgetting one, and a session's default sandbox);
//   - execgate: the one way every process the engine starts in a sandbox
//     reaches the runtime (the session with the sandbox's agent, the
//     wrapper for another user or an install, the hold an install puts);
//   - agentclient: the engine's end of a session with a sandbox's agent;
//   - run: one process in a sandbox (wrapper, sweep, timeout, output caps,
//     progress, out-of-memory count, disk watchdog) and the languages;
//   - kernel: the persistent interpreters and their framed protocol;
//   - capture: installs, commits, diffs and Dockerfile export;
//   - files: single files and listings inside a sandbox, and copies
//     between it and the host;
//   - hostfs: host paths under the allowed roots, tar to and from the host;
//   - pool: the warm pool, and the one in force (made for the config,
//     replaced when it changes, a spare handed out as a sandbox);
//   - snapshot: snapshots and forks (the tools, embedded in the Engine;
//     taking, the limits' ledger, restoring in place, the committed
//     images' budget, the sweep of what a gone sandbox left);
//   - stats: CPU and memory sampling for what someone looks at;
//   - probe: what the runtime is and can do (the daemon's watch, GPU
//     checks, sandtray doctor's probes);
//   - jobs: background jobs (job_status, job_stop, the app's list of
//     them), their output's budget, and a call's timing;
//   - network: the engine's side of the sandboxes' network (the egress
//     gate's channels and approvals, the secrets, expose_port's forwards),
//     embedded in the Engine;
//   - portfwd: port forwards, with expose_port's policy and the table of
//     every sandbox's forwards;
//   - egress: the gate of sandboxes with network "egress" (rules, asks,
//     records);
//   - statedir: the state dir's per-sandbox state files (what a state
//     holds) and activity logs, the coalesced saves of last-use times, and
//     the engine's identity, which derives from the state dir;
//   - imagebuild: the sandbox image, from the embedded Dockerfile or from
//     Debian's mirror;
//   - images: what the runtime has of an image, the default image's one
//     build at a time, and a create's missing image (built or pulled);
//   - safetext: output made safe for JSON, the GUI and terminals.
//
// They never import the engine: each defines the small interface or value
// it needs (a Target sandbox, a Runner, a Host) and the engine implements
// it.
//
// The runtime itself is engine/runtime's interface; engine/runtime/docker,
// linked in by the programs, is the only importer of the Docker SDK. The
// configuration is package engine/config (config.go here keeps the names
// the app knew, as aliases). The front-ends that serve the engine (the MCP
// server, the private socket, the control endpoint) are under serve/.
//
// One execute_code call, in one direction, through at most six files:
//
//  1. serve/mcpserver/tools/exec.go: the tool's arguments into a sandbox.CodeRequest;
//  2. execute.go: ExecCode validates, picks the language, asks the registry
//     for its sandbox, and dispatch runs the work (on the caller's
//     goroutine, or as a job when it outlasts its wait);
//  3. registry.go: target resolves the sandbox (the session's default one is
//     created once, create.go) and internal/registry's Acquire marks it busy;
//  4. guard.go: the call enters the sandbox's gate (it waits while an
//     install holds the sandbox) and is guarded by the disk watchdog;
//  5. internal/kernel: the language's kernel runs the code (boxTarget, in
//     execute.go, is the sandbox as it sees it);
//  6. internal/run: its Output collects the streams, and the Result with the
//     call's one sandbox.Outcome comes back to execute.go's finishCall, which
//     settles a kill for memory, renders the outcome once and records it
//     (activity.go).
//
// One lifetime: the engine's base context (the registry's Base), made in
// New and cancelled by Close, is the root of the loops, the calls' and
// jobs' runs and the kernels; Acquire and Create refuse work once Close has begun, and Close
// waits for one group that counts them. Failures are classified with the
// kinds of engine/sandbox.
package engine
