package runtime

import (
	"io"
	"math"
	"time"
)

// Where every sandbox has the agent (package agent), read-only: no user in
// the sandbox, root included, can change it.
const (
	AgentDir  = "/.sandtray"
	AgentPath = AgentDir + "/sandtray-agent"
)

// Where a sandbox on the engine's own host finds its link: a folder of the
// engine's (CreateOptions.LinkDir), mounted read-only, that holds the unix
// socket the engine listens on for that sandbox alone. The agent, PID 1,
// dials it at its start and when signalled (SIGUSR1): the session then
// runs over a socket between the two processes, with no daemon in between.
const (
	LinkDir    = "/.sandtray-link"
	LinkSocket = LinkDir + "/s"
)

// Agent is the agent's program, built for the runtime's platform.
type Agent struct {
	Binary []byte
	Digest string // hex SHA-256 of Binary
}

// CreateOptions is a sandbox container to create. The hardening that never
// varies (all capabilities dropped, no-new-privileges, init, restart policy
// "no", not privileged, no mounts) is applied by Create itself; only what the
// user may configure is here.
type CreateOptions struct {
	Name     string // container name; "" lets the runtime choose
	Image    string
	Labels   map[string]string
	Env      []string // KEY=VALUE
	Workdir  string
	Cmd      []string // the long-lived main process, e.g. ["sleep", "infinity"]
	Network  string   // "none" or "bridge"
	MemoryMB int64    // memory limit; swap is set equal, so no swap
	// MilliCPUs is the CPU limit in thousandths of a CPU (millicores):
	// 1000 is one whole CPU, 10 the smallest limit every runtime accepts.
	MilliCPUs int64
	PidsLimit int64
	CapAdd    []string // added back after dropping all
	Runtime   string   // the OCI runtime: "" for the runtime's default, "runsc" for gVisor
	Hostname  string
	// User is who the main process and every exec that names no user run
	// as: "uid", "uid:gid", "name" or "name:group", names as the image has
	// them; "" is the image's user. Create makes Workdir owned by it.
	User string
	// ReadOnlyRoot makes the root filesystem read-only (the strict
	// profile); Tmpfs then holds the places code may write.
	ReadOnlyRoot bool
	// Tmpfs mounts a size-limited tmpfs (path → size in MB) at each path,
	// owned by User (but /tmp, which is world-writable and sticky). Its
	// contents live in memory, count in the memory limit, and are not part
	// of the container's writable layer (diff, commit and export miss them).
	Tmpfs map[string]int64
	// FileSizeMB caps the size of any one file the container's processes
	// write (RLIMIT_FSIZE: a write past it fails, SIGXFSZ); 0 for none.
	FileSizeMB int64
	// GPUs is how many GPUs the container gets: 0 none, -1 every one, and
	// GPUMethod how to request them (GPUNvidia or GPUCDI; see GPUSupport).
	GPUs      int
	GPUMethod string
	// Attached makes Cmd's stdin, stdout and stderr a private channel to
	// whoever attaches before the start (see Runtime.Attach): stdin is open
	// for that one attach and closes when it goes (StdinOnce), the output
	// goes to no log (it never lands on the host's disk nor in the
	// runtime's logs), and there is no init of the runtime's: an init
	// would keep the channel open as PID 1, where code in the sandbox could
	// reopen it through /proc/1/fd. Cmd is then the container's init: it
	// must reap orphans, end on SIGTERM, and keep the channel from every
	// other process (engine/internal/kernel's launcher does).
	Attached bool
	// Agent, when set, is put at AgentPath, read-only, and is the
	// container's PID 1 (`sandtray-agent init`, with no other init): Cmd
	// is then ignored, and Attached makes its stdin and stdout the
	// engine's session with it.
	Agent *Agent
	// LinkDir, when set, is a folder on the engine's host mounted
	// read-only at LinkDir (see LinkSocket): the sandbox's link.
	LinkDir string
}

// State is a container's state, in the words every runtime reports it in.
type State string

// The states of a container.
const (
	StateCreated    State = "created"    // made, never started
	StateRunning    State = "running"    // its main process runs
	StatePaused     State = "paused"     // its processes are frozen (Pauser)
	StateRestarting State = "restarting" // the runtime is starting it again
	StateRemoving   State = "removing"   // on its way out
	StateExited     State = "exited"     // stopped: its main process ended or was ended
	StateDead       State = "dead"       // the runtime failed to stop or remove it
)

// Container is what Inspect and List report about a container.
type Container struct {
	ID        string
	Name      string // without the leading slash
	Image     string // the image reference it was created from
	ImageID   string
	Labels    map[string]string
	State     State
	Created   time.Time
	ExitCode  int
	OOMKilled bool
	Networks  []string // networks it is attached to now, sorted (Inspect only)
	// ReadOnlyRoot: its root filesystem is read-only, the strict profile
	// (Inspect only).
	ReadOnlyRoot bool
	// Init: its PID 1 is the runtime's own init, from the host (Inspect
	// only). Without it, PID 1 is its main command.
	Init bool
	// StartedAt is when its current run (or its last) started: each start
	// has its own (Inspect only).
	StartedAt time.Time
	// Agent: the agent is mounted read-only at AgentPath and is PID 1
	// (Inspect only). A container made before Sandtray had its agent has
	// none.
	Agent bool
	// Pid is its PID 1's process id on the runtime's host while it runs,
	// else 0 (Inspect only).
	Pid int
}

// ExecOptions is a process to run in a running container.
type ExecOptions struct {
	Cmd     []string
	Env     []string // KEY=VALUE
	Workdir string
	User    string
	// Marker, when set, is put in the process's environment
	// (SANDTRAY_EXEC=Marker), which what it starts inherits; the engine's
	// exec gate then kills, when it ends, its process group and whatever
	// carries the marker.
	Marker string
	Stdin  io.Reader // nil: no stdin; otherwise copied then closed (half-close)
	Stdout io.Writer // demultiplexed stdout
	Stderr io.Writer // demultiplexed stderr
}

// PathStat describes a path inside a container.
type PathStat struct {
	Name       string
	Size       int64
	Mode       uint32 // Go fs.FileMode bits
	ModTime    time.Time
	LinkTarget string
}

// StatsSample is one raw resource sample; the engine turns two into a CPU %.
type StatsSample struct {
	Read        time.Time
	CPUTotal    uint64 // cumulative container CPU time, ns
	SystemCPU   uint64 // cumulative host CPU time, ns
	OnlineCPUs  uint32
	MemoryUsage uint64 // raw usage
	MemoryLimit uint64
	MemoryStats map[string]uint64 // the cgroup's memory.stat counters ("anon", "inactive_file", …)
	Pids        uint64
}

// Event is a container lifecycle event for a managed container.
type Event struct {
	ContainerID string
	Action      string // create, start, die, stop, kill, destroy, oom, ...
	Time        time.Time
}

// Change is one path of a container's filesystem that differs from its image.
type Change struct {
	Path string
	Kind string // ChangeAdded, ChangeChanged or ChangeDeleted
}

// Kinds of Change.
const (
	ChangeAdded   = "added"
	ChangeChanged = "changed"
	ChangeDeleted = "deleted"
)

// PullProgress is one status line of an image pull.
type PullProgress struct {
	Status  string // e.g. "Downloading"
	ID      string // layer id
	Current int64
	Total   int64
}

// Image is what InspectImage reports about a local image.
type Image struct {
	ID          string   // "sha256:..."
	RepoTags    []string // e.g. "debian:bookworm"
	RepoDigests []string // e.g. "debian@sha256:..."; empty for images never pushed or pulled
	Labels      map[string]string
	Env         []string
	Cmd         []string
	Entrypoint  []string
	User        string
	Workdir     string
}

// ImageConfig is the configuration a committed image gets. The runtime fills
// the fields left empty (except Labels) from the container's own
// configuration.
type ImageConfig struct {
	Labels     map[string]string // the container's own labels are blanked, see Commit
	Env        []string
	Cmd        []string
	Entrypoint []string
	User       string
	Workdir    string
}

// DaemonInfo describes the runtime's daemon a client talks to, for
// diagnostics.
type DaemonInfo struct {
	Version       string   // e.g. "20.10.24", or Podman's "4.3.1"
	API           string   // e.g. "1.41"
	Product       string   // e.g. "Podman Engine": the first component's name
	StorageDriver string   // e.g. "overlay2", "fuse-overlayfs"
	Runtimes      []string // OCI runtimes, sorted: "runc", "runsc" (gVisor), …
	Host          string   // the runtime host's name (a VM's, when the runtime runs in one)
}

// DiskInfo is what the runtime tells of a container's writable layer.
type DiskInfo struct {
	// UpperDir is the layer's folder on the daemon's host, for the overlay
	// drivers (overlay2, fuse-overlayfs); "" for the others.
	UpperDir string
}

// The ways a sandbox can be given GPUs (CreateOptions.GPUMethod).
const (
	// GPUNvidia is the NVIDIA device driver of the runtime (--gpus): the
	// daemon has it when the NVIDIA Container Toolkit is installed.
	GPUNvidia = "nvidia"
	// GPUCDI is CDI device names (nvidia.com/gpu=...), on daemons with CDI
	// enabled and an NVIDIA CDI spec generated.
	GPUCDI = "cdi"
)

// GPUSupport says whether the daemon can give containers NVIDIA GPUs.
type GPUSupport struct {
	Method string // GPUNvidia, GPUCDI, or "" when it cannot
	Detail string // what was found, or what is missing and what to install
}

// BuildStep is one command run to its end in a container of Image, for the
// image builder: as root, with the runtime's default capabilities, no
// network, the runtime's init as PID 1, and Labels on the container.
type BuildStep struct {
	Image  string
	Cmd    []string
	Env    []string
	Labels map[string]string
	Output io.Writer // the command's stdout and stderr, as they come; nil discards
}

// ImageDetails is what `sandtray image status` shows of an image.
type ImageDetails struct {
	ID      string
	Created time.Time
	Size    int64
	Comment string
}

// ImageEvent is something that happened to a local image: "delete",
// "untag", "tag", "pull", "load", "import".
type ImageEvent struct {
	Ref    string // the image's name or id, as the runtime reports it
	Action string
}

// LabeledImage is one local image found by its labels.
type LabeledImage struct {
	ID       string
	RepoTags []string
	Labels   map[string]string
	Created  time.Time
	Size     int64 // the whole image, its base's layers included
}

// MilliCPUs is cpus (a fraction of CPUs, as sandbox.Spec gives them) in
// millicores, rounded to the nearest: CreateOptions.MilliCPUs's unit.
func MilliCPUs(cpus float64) int64 { return int64(math.Round(cpus * 1000)) }
