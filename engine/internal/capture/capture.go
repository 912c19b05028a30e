// Package capture is what Sandtray keeps of a sandbox beyond its life:
// packages installed with their exact versions (on the network only for the
// install), commits to images, the diff against the image, and a Dockerfile
// that rebuilds it.
//
// It never sees the engine: a call names its sandbox with a Target value,
// runs processes through a Runner the engine binds to that sandbox, and
// tells the sandbox's activity log through a func value.
package capture

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/internal/hostfs"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Docker is what capture needs from Docker.
type Docker interface {
	Inspect(ctx context.Context, id string) (runtime.Container, error)
	InspectImage(ctx context.Context, ref string) (runtime.Image, error)
	Commit(ctx context.Context, id, tag string, cfg runtime.ImageConfig) (string, error)
	RemoveUntagged(ctx context.Context, id string) (bool, error)
	TagImage(ctx context.Context, src, ref string) error
	RemoveImage(ctx context.Context, ref string) error
	Exec(ctx context.Context, id string, o runtime.ExecOptions) (int, error)
	Diff(ctx context.Context, id string) ([]runtime.Change, error)
	StatPath(ctx context.Context, id, path string) (runtime.PathStat, error)
	CopyFrom(ctx context.Context, id, path string) (io.ReadCloser, runtime.PathStat, error)
	// ExecAgent runs the agent's subcommand args as user with an exec of
	// its own and returns at most max bytes of its output.
	ExecAgent(ctx context.Context, id, user string, args []string, stdin io.Reader, max int) ([]byte, error)
	ConnectNetwork(ctx context.Context, id, network string) error
	DisconnectNetwork(ctx context.Context, id, network string) error
	// ExecsIn counts the execs the engine has in flight in container id:
	// started, or about to start (engine/internal/execgate).
	ExecsIn(id string) int
	// StartingIn counts those of ExecsIn whose process the runtime has not
	// started yet, as far as the engine can tell (a relay's stream until
	// the runtime reports its process): the freeze waits for none.
	StartingIn(id string) int
}

// Config is what capture needs of the engine's configuration.
type Config struct {
	AllowNetwork bool          // sandbox.allow_network: a sandbox may be on the bridge
	OutputBytes  int           // limits.output_bytes: an install's kept output
	MaxTimeout   time.Duration // limits.max_exec_timeout, named in errors
	// Private is a folder of the engine's own inside every sandbox, left
	// out of diffs.
	Private string
	// ExportRecords is a folder in the engine's state dir (see RecordsIn)
	// where each export records what it wrote (see exportRecord); "" keeps
	// none, so no folder that holds files is ever written again.
	ExportRecords string
	// CopyLimits bound an export's archive (limits.max_copy_bytes and
	// limits.max_copy_files).
	CopyLimits hostfs.Limits
	// Protected are the images the configuration starts sandboxes from
	// (default, language and pool images): commits never write them.
	Protected []string
	// Engine is the engine's identity: its commits carry it
	// (sandbox.LabelCommittedBy), and a commit moves only a tag of an
	// image that carries it.
	Engine string
	// Images bounds the disk the engine's committed images take; nil: no
	// bound.
	Images ImageBudget
}

// ImageBudget bounds the disk of the images commits make
// (limits.max_committed_mb, the engine's).
type ImageBudget interface {
	// Check refuses a commit before it is made, when the images already
	// fill the budget.
	Check(ctx context.Context) error
	// Admit refuses image id, just committed, when it takes the images
	// past the budget: the commit then takes it back.
	Admit(ctx context.Context, id string) error
}

// RecordsIn is the folder for Config.ExportRecords in the engine's state
// dir, out of every sandbox's reach; "" when there is no state dir.
func RecordsIn(stateDir string) string {
	if stateDir == "" {
		return ""
	}
	return filepath.Join(stateDir, "exports")
}

// Capture runs the capture tools. Create it with New.
type Capture struct {
	docker Docker
	cfg    Config
	log    *slog.Logger
}

// New returns a Capture that talks to d.
func New(d Docker, cfg Config, log *slog.Logger) *Capture {
	return &Capture{docker: d, cfg: cfg, log: log}
}

// Target is the sandbox a call works on, as the engine knows it: its handle,
// what capture needs of its spec and state, and the engine's part in an
// install (the hold, the gate, the init).
type Target struct {
	sandbox.Handle
	Image    string
	Language string
	Network  string
	Env      map[string]string
	Packages []sandbox.Package // its manifest
	// Hold, when set, keeps new calls out of the sandbox from when it
	// returns until release is called, once the calls in flight there have
	// ended (background jobs go on; an install stops their processes).
	Hold func(ctx context.Context) (release func(), err error)
	// Gate opens an install's way out through the egress gate, for a
	// sandbox without the bridge network: hosts granted for this call, and
	// the installer's proxy environment; close ends it. nil refuses such
	// installs.
	Gate func(ctx context.Context, hosts []string) (env []string, close func(), err error)
	// InitIsOurs, when set, tells whether the sandbox's PID 1 is an init of
	// Sandtray's, which reaps and runs nothing of the sandbox's (Docker's
	// own, or Sandtray's in the run the engine started it in); nil: it is.
	InitIsOurs func(ctx context.Context) (bool, error)
	// SignalInit, when set, sends a signal ("SIGSTOP", "SIGCONT") to the
	// sandbox's PID 1 from outside (Docker): from inside nothing can stop
	// it. An install's freeze stops a PID 1 that is not Sandtray's
	// (InitIsOurs) with the rest.
	SignalInit func(ctx context.Context, sig string) error
	// Installed, when set, saves packages an install just installed in
	// the sandbox's manifest (see MergePackages).
	Installed func([]sandbox.Package)
}

// Exec is one process for a Runner: it runs with the engine's caps, sweep
// and timeout.
type Exec struct {
	Cmd, Env      []string
	User, Workdir string
	Timeout       time.Duration
	Stream        io.Writer // also receives stdout and stderr as they come
}

// Ran is what a process left: its result for the model, and the larger
// copies of its output kept for the activity log.
type Ran struct {
	Result         sandbox.ExecResult
	LogOut, LogErr string
}

// Runner runs processes in the target sandbox.
type Runner interface {
	Run(ctx context.Context, x Exec) (Ran, error)
}

// Log records a tool's work in the sandbox's activity log: input is what it
// worked on, detail what it did, err how it ended.
type Log func(input string, err error, detail string)

// MergePackages returns manifest with each package of add replacing the
// entry of the same manager and name (a re-install updates the version),
// sorted by manager and name.
func MergePackages(manifest, add []sandbox.Package) []sandbox.Package {
	out := slices.DeleteFunc(slices.Clone(manifest), func(old sandbox.Package) bool {
		return slices.ContainsFunc(add, func(p sandbox.Package) bool { return p.Manager == old.Manager && p.Name == old.Name })
	})
	out = append(out, add...)
	slices.SortFunc(out, func(a, b sandbox.Package) int {
		return cmp.Or(strings.Compare(a.Manager, b.Manager), strings.Compare(a.Name, b.Name))
	})
	return out
}

func report(progress sandbox.Progress, current, total float64, msg string) {
	if progress != nil {
		progress(current, total, msg)
	}
}
