package wire

// LinkSocket is where the agent, PID 1, finds the engine's socket for its
// sandbox when the engine links to it (engine/runtime.LinkSocket).
const LinkSocket = "/.sandtray-link/s"

// Operations a request names.
const (
	OpHello  = "hello"  // the agent's pid, uid and version
	OpSpawn  = "spawn"  // a process; frames follow both ways
	OpKill   = "kill"   // SIGKILL process groups and what carries a marker
	OpStat   = "stat"   // one path
	OpRead   = "read"   // a file's bytes from Offset, at most Limit; raw bytes follow the reply
	OpWrite  = "write"  // Size raw bytes follow the request; the reply comes after them
	OpMkdir  = "mkdir"  // a folder and its parents
	OpRemove = "remove" // a path, and what is under it
	OpList   = "list"   // a folder's entries to Depth
	OpTarOut = "tarout" // a tar of Path follows the reply
	OpTarIn  = "tarin"  // a tar to extract into Path follows the request; the reply comes after it
	OpDial   = "dial"   // a TCP connection to the sandbox's loopback Port; raw bytes follow
	OpListen = "listen" // listen on the sandbox's loopback Port; each connection comes as a stream the agent opens
	OpProbe  = "probe"  // the sandbox's cgroup counters
	OpConn   = "conn"   // agent → engine: a connection a listener accepted
)

// Request opens a stream: one operation and its arguments.
type Request struct {
	Op string `json:"op"`

	// spawn
	Argv   []string `json:"argv,omitempty"`
	Env    []string `json:"env,omitempty"`    // KEY=VALUE, after the agent's own (later wins)
	Dir    string   `json:"dir,omitempty"`    // "" is the agent's
	Stdin  bool     `json:"stdin,omitempty"`  // stdin frames follow; otherwise /dev/null
	Marker string   `json:"marker,omitempty"` // SANDTRAY_EXEC: when the process ends, what carries it and its group are killed

	// kill
	Groups []int `json:"groups,omitempty"`

	// files
	Path   string `json:"path,omitempty"`
	Offset int64  `json:"offset,omitempty"`
	Limit  int64  `json:"limit,omitempty"`
	Size   int64  `json:"size,omitempty"`
	Mode   uint32 `json:"mode,omitempty"` // permission bits
	Depth  int    `json:"depth,omitempty"`
	All    bool   `json:"all,omitempty"`    // list: dot files too
	Max    int    `json:"max,omitempty"`    // list: at most this many entries
	Parent bool   `json:"parent,omitempty"` // write: create missing parent folders
	UID    int    `json:"uid,omitempty"`    // write, tarin: owner, when the agent may set it (-1: its own)
	GID    int    `json:"gid,omitempty"`

	// dial, listen, conn
	Port int    `json:"port,omitempty"`
	Tag  string `json:"tag,omitempty"` // listen: named in each conn request
}

// Error kinds, which the engine maps to engine/sandbox's.
const (
	KindNotFound    = "notfound"
	KindExists      = "exists"
	KindNotDir      = "notdir"
	KindIsDir       = "isdir"
	KindPermission  = "permission"
	KindInvalid     = "invalid"
	KindRefused     = "refused"     // dial: nothing listens; listen: the port is taken
	KindUnsupported = "unsupported" // not in this sandbox (no cgroup file, ...)
	KindNoProgram   = "noprogram"   // spawn: the program does not exist
)

// Reply answers a request.
type Reply struct {
	Err  string `json:"err,omitempty"`  // empty: done
	Kind string `json:"kind,omitempty"` // an error kind

	// hello
	Version int `json:"version,omitempty"`
	UID     int `json:"uid,omitempty"`
	GID     int `json:"gid,omitempty"`

	// spawn
	Pid int `json:"pid,omitempty"`

	// kill
	Killed int `json:"killed,omitempty"`

	// stat, read
	Stat *Stat `json:"stat,omitempty"`
	// read: how many raw bytes follow
	Size int64 `json:"size,omitempty"`

	// list
	Entries   []Entry `json:"entries,omitempty"`
	Truncated bool    `json:"truncated,omitempty"`

	// probe
	OOMKills *int64 `json:"oom_kills,omitempty"`
	Pids     int    `json:"pids,omitempty"`
}

// Stat describes a path.
type Stat struct {
	Name    string `json:"name"`
	Size    int64  `json:"size"`
	Mode    uint32 `json:"mode"` // Go's fs.FileMode bits
	ModTime int64  `json:"mtime"`
	Link    string `json:"link,omitempty"` // a symlink's target
}

// Entry is one path of a listing, relative to the listed folder.
type Entry struct {
	Path    string `json:"path"`
	Type    string `json:"type"` // file, dir, symlink, other
	Size    int64  `json:"size"`
	Mode    uint32 `json:"mode"`
	ModTime int64  `json:"mtime"`
	Link    string `json:"link,omitempty"`
}

// Signal asks the agent to signal a process it spawned, or its group.
type Signal struct {
	Signal int  `json:"signal"`
	Group  bool `json:"group,omitempty"`
}

// Exit is how a spawned process ended: Code, or 128+Signal for a signal,
// as a shell reports it.
type Exit struct {
	Code   int    `json:"code"`
	Signal int    `json:"signal,omitempty"`
	Err    string `json:"err,omitempty"` // the agent lost the process
}
