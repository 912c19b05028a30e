package sandbox

import "time"

// Network modes a sandbox may have.
const (
	NetworkNone   = "none"
	NetworkBridge = "bridge"
)

// Status of a sandbox's container.
type Status string

// Statuses, from Docker's container states folded into what a user cares about.
const (
	StatusRunning Status = "running"
	StatusStopped Status = "stopped" // created, exited or dead
	StatusPaused  Status = "paused"
	StatusMissing Status = "missing" // removed behind the engine's back
)

// Spec is everything a sandbox is created with. It is stored as a label, so it
// must stay small and must not hold secrets the user would not want in
// `docker inspect` (env values are shown there anyway).
type Spec struct {
	Name       string            `json:"name"`
	Image      string            `json:"image"`
	Language   string            `json:"language,omitempty"`
	Persistent bool              `json:"persistent"`
	Network    string            `json:"network"`
	MemoryMB   int64             `json:"memory_mb"`
	CPUs       float64           `json:"cpus"`
	PidsLimit  int64             `json:"pids_limit"`
	Env        map[string]string `json:"env,omitempty"`
	Workdir    string            `json:"workdir"`
	Runtime    string            `json:"runtime,omitempty"` // "runsc" for gVisor, "" for Docker's default
	CapAdd     []string          `json:"cap_add,omitempty"`
	User       string            `json:"user,omitempty"`    // what every exec runs as unless it says; "" is the image's user
	GPUs       string            `json:"gpus,omitempty"`    // "" none, "all", or a count such as "2"
	Profile    string            `json:"profile,omitempty"` // "standard" or "strict" (sandbox.profile when it was made); "" before profiles existed
	// Secrets are an egress sandbox's placeholders, secret name →
	// placeholder, as its environment holds them; the egress gate swaps
	// each for the secret's value on the secret's hosts. Never a value.
	Secrets map[string]string `json:"secrets,omitempty"`
}

// Owner is the MCP session that created a sandbox.
type Owner struct {
	Session string `json:"session,omitempty"`
	Client  string `json:"client,omitempty"` // clientInfo name and version, e.g. "claude-ai 0.1.0"
}

// Info describes one sandbox as the engine sees it now.
type Info struct {
	ID         string        `json:"id"`
	Name       string        `json:"name"`
	Image      string        `json:"image"`
	Status     Status        `json:"status"`
	Persistent bool          `json:"persistent"`
	Owner      Owner         `json:"owner"`
	CreatedAt  time.Time     `json:"created_at"`
	LastUsed   time.Time     `json:"last_used"`
	Spec       Spec          `json:"spec"`
	Stats      Stats         `json:"stats"`
	Ports      []PortForward `json:"ports,omitempty"` // forwards to the host's loopback, by sandbox port
	// EgressRules are the rules the user gave the sandbox on the egress
	// gate (network "egress"); the engine's EgressNetwork has the rest.
	EgressRules EgressRules `json:"egress_rules,omitzero"`
	// SnapshotsChanged moves on whenever the sandbox's snapshots change
	// (one taken or deleted): a view of them (the app's Snapshots tab)
	// loads them again when it differs from what it loaded them at. It
	// crosses the app's protocol; the MCP tools do not show it.
	SnapshotsChanged uint64 `json:"snapshots_changed,omitempty"`
}

// Stats is a resource sample of a running sandbox.
type Stats struct {
	CPUPercent  float64 `json:"cpu_percent"`  // of one core; 200 means two full cores
	MemoryBytes uint64  `json:"memory_bytes"` // usage less page cache
	MemoryLimit uint64  `json:"memory_limit"`
	Pids        uint64  `json:"pids"`
}

// Snapshot is an immutable view of every sandbox, published by the engine to
// watchers. Receivers must not modify it.
type Snapshot struct {
	Time      time.Time    `json:"time"`
	Paused    bool         `json:"paused"`
	Sandboxes []Info       `json:"sandboxes"`
	Docker    DockerStatus `json:"docker"`
	Sessions  int          `json:"sessions"`       // live MCP sessions (connected clients)
	Notices   []Notice     `json:"notices"`        // the most recent notices, oldest first
	Pool      []PoolImage  `json:"pool,omitempty"` // what the warm pool holds, image by image
	// Egress are the requests of the egress gate waiting for the user's
	// answer (Engine.AnswerEgress), oldest first.
	Egress []EgressPending `json:"egress,omitempty"`
}

// DockerStatus says whether the engine can reach Docker.
type DockerStatus struct {
	Connected  bool   `json:"connected"`
	Version    string `json:"version,omitempty"`     // e.g. "20.10.24 (API 1.41)"
	Host       string `json:"host,omitempty"`        // e.g. "unix:///var/run/docker.sock"
	HostSource string `json:"host_source,omitempty"` // where Host came from and why, e.g. "Colima: the first that answered a ping"
	Error      string `json:"error,omitempty"`       // why not, and what to do
	// Runtime is the container runtime's name ([runtime] name: "docker").
	Runtime string `json:"runtime,omitempty"`
	// Lacks is what the runtime cannot do, by capability ("commit",
	// "pause", …; see engine/runtime), each with why: the app disables the
	// actions that need one, showing why.
	Lacks map[string]string `json:"lacks,omitempty"`
}

// Notice is an event a person should hear about (a desktop notification).
// Seq increases by one per notice, so a watcher can tell which are new.
type Notice struct {
	Seq       uint64    `json:"seq"`
	Time      time.Time `json:"time"`
	SandboxID string    `json:"sandbox_id,omitempty"`
	Title     string    `json:"title"`
	Body      string    `json:"body"`
}
