// Package config is Sandtray's configuration: the types of config.toml's
// sections, their defaults (a missing file is valid), loading with unknown
// keys refused, and validation that names the key at fault. It also holds
// the rules that follow from the configuration alone: which image a
// language gets, the bounds a sandbox's spec must keep, the strict
// profile's container settings and the pull policy. It knows nothing of the
// engine that runs with it.
package config

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/homedir"
)

// Config is the engine's configuration, read from config.toml. The zero file
// is valid: Default holds values that work with no file at all.
type Config struct {
	DefaultImage string            `toml:"default_image"`
	Images       map[string]string `toml:"images"` // language → image
	Limits       Limits            `toml:"limits"`
	Sandbox      SandboxDefaults   `toml:"sandbox"`
	Host         HostAccess        `toml:"host"`
	Pool         Pool              `toml:"pool"`
	HTTP         HTTP              `toml:"http"`
	Ports        Ports             `toml:"ports"`
	GPU          GPU               `toml:"gpu"`
	Pull         Pull              `toml:"pull"`    // see security.go
	Commit       Commit            `toml:"commit"`  // see commit.go
	Runtime      Runtime           `toml:"runtime"` // see runtime.go
	Docker       Docker            `toml:"docker"`
	Kubernetes   Kubernetes        `toml:"kubernetes"` // see runtime.go
	Egress       Egress            `toml:"egress"`     // see egress.go
	Secrets      map[string]Secret `toml:"secrets"`    // see secrets.go

	// StateDir holds sandbox state and activity logs; set by the host, not the file.
	StateDir string `toml:"-"`
	// ConfigDir holds what is the user's rather than the sandboxes': the
	// egress gate's CA and, where no OS keychain answers, the secrets'
	// file. Set by the host; "" means StateDir.
	ConfigDir string `toml:"-"`
}

// Limits bound what one sandbox and one call may use.
type Limits struct {
	MemoryMB        int64    `toml:"memory_mb"`
	MaxMemoryMB     int64    `toml:"max_memory_mb"`
	CPUs            float64  `toml:"cpus"`
	MinCPUs         float64  `toml:"min_cpus"`
	MaxCPUs         float64  `toml:"max_cpus"`
	Pids            int64    `toml:"pids"`
	ExecTimeout     Duration `toml:"exec_timeout"`
	MaxExecTimeout  Duration `toml:"max_exec_timeout"`
	OutputBytes     int      `toml:"output_bytes"`     // per stream, to the model
	LogOutputBytes  int      `toml:"log_output_bytes"` // per stream, kept in the activity log
	ReadFileBytes   int64    `toml:"read_file_bytes"`  // default and maximum read_file limit
	MaxRequestBytes int      `toml:"max_request_bytes"`
	MaxImageBytes   int      `toml:"max_image_bytes"` // per image a run writes to its outputs folder
	DiskMB          int64    `toml:"disk_mb"`         // files a sandbox may add to its image; 0: no limit
	CopyLimits               // max_copy_bytes, max_copy_files, max_sandboxes: see limits.go
	JobLimits                // max_jobs, max_jobs_total, job_output_*: see jobs.go
	SnapshotLimits           // max_snapshots, max_forks, max_snapshot_mb, max_committed_mb: see snapshots.go
}

// SandboxDefaults shape every new sandbox.
type SandboxDefaults struct {
	Network      string   `toml:"network"`       // "none" (default), "egress" or "bridge"
	AllowNetwork bool     `toml:"allow_network"` // may a caller ask for "bridge"? (false by default: "egress" is the gated way out)
	CapAdd       []string `toml:"cap_add"`       // capabilities added back after dropping all
	User         string   `toml:"user"`          // "uid:gid" or a name the image has; "" is the image's user
	Runtime      string   `toml:"runtime"`       // "runsc" for gVisor
	Profile      string   `toml:"profile"`       // "standard" or "strict", see security.go
	TmpfsMB      int64    `toml:"tmpfs_mb"`      // each strict sandbox's workdir and /tmp
	Workdir      string   `toml:"workdir"`
	IdleTTL      Duration `toml:"idle_ttl"`      // ephemeral sandboxes unused this long are removed
	SessionGrace Duration `toml:"session_grace"` // ephemeral sandboxes outlive their session this long
}

// HostAccess says which host folders copy_to_sandbox and copy_from_sandbox may touch.
type HostAccess struct {
	AllowedRoots []string `toml:"allowed_roots"`
}

// ExpandedRoots are the allowed host roots with a leading "~/" made the
// user's home, as copies resolve them.
func (h HostAccess) ExpandedRoots() []string {
	out := make([]string, len(h.AllowedRoots))
	for i, r := range h.AllowedRoots {
		out[i] = homedir.Expand(r)
	}
	return out
}

// Duration is a time.Duration written as "30s" or "10m" in TOML.
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration like \"30s\" or \"10m\"", b)
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration as Go does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// DefaultImage is the image sandboxes use unless told otherwise; `make image` builds it.
const DefaultImage = "sandtray/sandbox:latest"

// Default returns settings that work with no config file.
func Default() Config {
	home, _ := os.UserHomeDir()
	return Config{
		DefaultImage: DefaultImage,
		Images:       map[string]string{},
		Limits: Limits{
			MemoryMB: 1024, MaxMemoryMB: 8192,
			CPUs: 1, MinCPUs: minCPUsFloor, MaxCPUs: float64(runtime.NumCPU()),
			Pids:        512,
			ExecTimeout: Duration{30 * time.Second}, MaxExecTimeout: Duration{10 * time.Minute},
			OutputBytes: 32 << 10, LogOutputBytes: 1 << 20,
			ReadFileBytes: 1 << 20, MaxRequestBytes: 16 << 20,
			MaxImageBytes: 1 << 20, DiskMB: 10 << 10, CopyLimits: defaultCopyLimits(), JobLimits: defaultJobLimits(),
			SnapshotLimits: defaultSnapshotLimits(),
		},
		Sandbox: SandboxDefaults{
			Network: sandbox.NetworkNone, AllowNetwork: false, Workdir: "/workspace",
			IdleTTL: Duration{30 * time.Minute}, SessionGrace: Duration{2 * time.Minute},
			Profile: ProfileStandard, TmpfsMB: defaultTmpfsMB,
		},
		Host:  HostAccess{AllowedRoots: []string{filepath.Join(home, "Sandtray")}},
		Pool:  defaultPoolConfig(),
		HTTP:  HTTP{},
		Ports: defaultPortsConfig(), GPU: defaultGPUConfig(),
		Pull: defaultPull(), Commit: Commit{Namespace: defaultCommitNamespace},
		Egress: defaultEgress(),
	}
}

// Load reads path over the defaults. A missing file gives the defaults;
// an unknown key or a bad value is an error naming the key.
func Load(path string) (Config, error) {
	cfg := Default()
	md, err := toml.DecodeFile(path, &cfg)
	if errors.Is(err, os.ErrNotExist) {
		return Default(), nil
	}
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		return Config{}, fmt.Errorf("config %s: unknown key %q; docs/configuration.md lists every valid key", path, undecoded[0].String())
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// maxImageBytes bounds limits.max_image_bytes: images travel in one frame
// from the kernel and base64-encoded in one MCP message.
const maxImageBytes = 16 << 20

// Validate checks every value and names the first bad key.
func (c *Config) Validate() error {
	l, s := c.Limits, c.Sandbox
	checks := []struct {
		bad bool
		key string
		why string
	}{
		{c.DefaultImage == "", "default_image", "must name an image"},
		{l.MemoryMB < 16, "limits.memory_mb", "must be at least 16"},
		{l.MaxMemoryMB < l.MemoryMB, "limits.max_memory_mb", "must be at least limits.memory_mb"},
		{l.CPUs <= 0, "limits.cpus", "must be above 0"},
		{l.MaxCPUs < l.CPUs, "limits.max_cpus", "must be at least limits.cpus"},
		{l.Pids < 16, "limits.pids", "must be at least 16"},
		{l.ExecTimeout.Duration <= 0, "limits.exec_timeout", "must be above 0"},
		{l.MaxExecTimeout.Duration < l.ExecTimeout.Duration, "limits.max_exec_timeout", "must be at least limits.exec_timeout"},
		{l.OutputBytes < 256, "limits.output_bytes", "must be at least 256"},
		{l.LogOutputBytes < l.OutputBytes, "limits.log_output_bytes", "must be at least limits.output_bytes"},
		{l.ReadFileBytes < 1, "limits.read_file_bytes", "must be above 0"},
		{l.MaxRequestBytes < 1024, "limits.max_request_bytes", "must be at least 1024"},
		{l.MaxImageBytes < 1024 || l.MaxImageBytes > maxImageBytes, "limits.max_image_bytes", "must be between 1024 and 16777216"},
		{l.DiskMB < 0 || l.DiskMB > 0 && l.DiskMB < 16, "limits.disk_mb", "must be 0 (no limit) or at least 16"},
		{!ValidNetwork(s.Network), "sandbox.network", `must be "none", "egress" or "bridge"`},
		{s.Network == sandbox.NetworkBridge && !s.AllowNetwork, "sandbox.network", `is "bridge", which sandbox.allow_network = false forbids: set allow_network = true, or use "egress"`},
		{!strings.HasPrefix(s.Workdir, "/"), "sandbox.workdir", "must be an absolute path"},
		{!validUser(s.User), "sandbox.user", fmt.Sprintf(`%q is not a user: use numeric ids such as "1000:1000", a name the image has such as "nobody", or "" for the image's own user`, s.User)},
		{s.IdleTTL.Duration <= 0, "sandbox.idle_ttl", "must be above 0"},
		{s.SessionGrace.Duration < 0, "sandbox.session_grace", "must not be negative"},
	}
	for _, ch := range checks {
		if ch.bad {
			return fmt.Errorf("%s %s: %w", ch.key, ch.why, sandbox.ErrInvalid)
		}
	}
	if err := c.Commit.check(); err != nil {
		return err
	}
	if err := l.CopyLimits.check(); err != nil {
		return err
	}
	if err := l.SnapshotLimits.check(); err != nil {
		return err
	}
	if err := l.JobLimits.check(); err != nil {
		return err
	}
	if err := c.Pool.validate(); err != nil {
		return err
	}
	if err := c.HTTP.Check(); err != nil {
		return err
	}
	if err := c.validateSecurity(); err != nil {
		return err
	}
	if err := c.validatePortsAndGPU(); err != nil {
		return err
	}
	if err := c.validateEgress(); err != nil {
		return err
	}
	if err := c.validateSecrets(); err != nil {
		return err
	}
	if err := c.Docker.check(); err != nil {
		return err
	}
	if err := c.Runtime.check(c.Docker); err != nil {
		return err
	}
	if err := c.Kubernetes.check(); err != nil {
		return err
	}
	for i, r := range c.Host.AllowedRoots {
		if !filepath.IsAbs(homedir.Expand(r)) {
			return fmt.Errorf("host.allowed_roots[%d] %q must be an absolute path: %w", i, r, sandbox.ErrInvalid)
		}
	}
	return nil
}

// userPart is one side of a Docker user spec: a numeric id or a name.
var userPart = regexp.MustCompile(`^([0-9]{1,10}|[A-Za-z_][A-Za-z0-9_.-]{0,31})$`)

// validUser reports whether u is "" or a user spec Docker accepts: "uid",
// "uid:gid", "name" or "name:group". Ids must fit in 31 bits, as runc wants.
func validUser(u string) bool {
	if u == "" {
		return true
	}
	parts := strings.Split(u, ":")
	if len(parts) > 2 {
		return false
	}
	for _, p := range parts {
		if !userPart.MatchString(p) {
			return false
		}
		if n, err := strconv.ParseUint(p, 10, 64); err == nil && n > math.MaxInt32 {
			return false
		}
	}
	return true
}

// ImageFor picks the image for a language: its own entry, else the default.
func (c *Config) ImageFor(language string) string {
	if img := c.Images[language]; img != "" {
		return img
	}
	return c.DefaultImage
}
