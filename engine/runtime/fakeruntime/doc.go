// Package fakeruntime is an in-memory runtime.Runtime for tests: a daemon
// with containers, images, a filesystem per container and processes that a
// test simulates, so the engine's logic (its registry, reaper, jobs, calls,
// pool and scoping) can be tested without Docker, in milliseconds.
//
// It imports the standard library, engine/runtime and engine/sandbox only,
// and it is ordinary (non-test) code so that any package's tests may use
// it.
//
// # The daemon
//
// New makes a daemon and a client of it (a *Runtime); Connect makes
// another client of the same daemon, as two engines on one Docker daemon
// have (Close ends only its own client: its calls then fail with
// sandbox.ErrUnavailable). SetDown makes the daemon stop answering
// (sandbox.ErrUnavailable) until it is up again, and breaks the event
// streams.
//
// # What it simulates
//
//   - Containers: Create (refusing a missing image with sandbox.ErrNotFound,
//     a name in use with sandbox.ErrConflict and a zero memory, CPU or pids
//     limit with sandbox.ErrInvalid, as the Docker runtime does), Start,
//     Stop, Kill, Signal, Remove, Rename, Inspect (by id, unique id prefix or
//     name), List by labels, UpdateLimits, networks, Pause and Unpause, and
//     lifecycle events (create, start, kill, die, stop, destroy, rename,
//     pause, unpause, update, oom) to Events' subscribers. A container's main
//     command is not run: a started container runs until stopped, killed or
//     removed.
//   - Images: a store of images with their configuration (AddImage), the
//     images a pull may fetch (AddPullable; any other pull fails with
//     sandbox.ErrNotFound, as Docker's pull of an unknown image does), tags,
//     removal, labels, sizes, and image events (pull, tag, untag, delete).
//   - Files: each container has an in-memory filesystem, made from its
//     image's files, that StatPath, CopyTo, CopyFrom and ExportContainer read
//     and write as tar streams, with Docker's semantics (CopyFrom's top
//     entry is the path's base name; a missing path is sandbox.ErrNotFound).
//     SizeRw is the size of the files written in the container.
//   - Processes: Exec and ExecStream run a Handler the test installs
//     (SetHandler) on a Proc: it reads Proc.Stdin, writes Proc.Stdout and
//     Proc.Stderr, returns an exit code, or waits on Proc.Done until it is
//     killed (its container stops, or the engine kills its process group).
//     As with Docker, a cancelled Exec returns at once and does not kill its
//     process: only a kill does. Every container has the agent (see
//     agent.go): its session spawns, kills (by call marker or process
//     group), reads and writes files and lists folders over the same
//     processes and files, and the engine's kernel launcher exits with the
//     launcher's "no python3" status, so the engine
//     runs code without kernels. Commands no handler takes run on Builtin, a
//     tiny shell (true, false, exit, echo, cat, sleep, mkdir -p, rm -rf,
//     cd, pwd, hostname; redirections to files, 2>&1 and >&2) over the
//     container's files.
//   - Stats: plausible samples: CPU time that grows while processes run,
//     the memory limit, a usage of a few MB plus the files written, and a
//     pid count.
//
// # What it lacks
//
// It implements the core of runtime.Runtime and the optional parts it can
// (Imager, Pauser, Networker, LayerDisker, Renamer, LimitUpdater,
// GPUProvider, Exporter), but not what makes no sense in memory:
// Committer (diff and commit), Builder and Attacher. So an engine on it is
// an engine on a runtime that cannot commit (runtime.CapabilitiesOf says
// so, the commit tools are not listed, such a call is refused naming the
// runtime). GPUSupport reports no GPUs, and Disk no writable-layer folder
// (the engine then measures with SizeRw). Name is "fake" unless SetName
// says otherwise. The conformance suite (engine/runtime/runtimetest) runs
// on it, as on Docker.
package fakeruntime
