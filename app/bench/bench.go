// Package bench measures Sandtray on the current machine, for `sandtray
// bench`: warm execute_code through the MCP socket against a per-call
// `docker exec` (what other sandbox tools do), a new sandbox's first result
// with the warm pool and without, and executions per second with concurrent
// clients. It runs engines of its own, in process, each on a private socket
// and state dir, with containers under a test label unique to the run, so it
// never touches the user's engine or sandboxes, and removes everything it
// made before it returns.
package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/sandtray/sandtray/engine/config"
)

// Options say what to measure.
type Options struct {
	// N is the number of timed calls per latency figure and per throughput
	// level; a new sandbox's first result is timed max(3, N/5) times. 0 means 100.
	N int
	// Image is the sandbox image; "" means the config's default image.
	Image string
	// Config is the engine configuration to measure; nil means the defaults.
	Config *config.Config
	// Progress receives a line per step and engine warnings; nil discards them.
	Progress io.Writer
	// Idle is how long idle CPU is measured, with the window closed and
	// open; 0 skips the idle figures (CPU with 50 sandboxes, RSS with 50
	// and 100), which need 100 sandboxes.
	Idle time.Duration
}

// Levels are the numbers of concurrent clients the throughput is measured with.
var Levels = []int{1, 4, 16}

// Run measures and returns the report. Everything it created is removed
// before it returns, also on error or cancellation.
func Run(ctx context.Context, opts Options) (rep Report, err error) {
	cfg, progress := prepare(&opts)
	dir, err := os.MkdirTemp("", "sandtray-bench-")
	if err != nil {
		return Report{}, err
	}
	defer os.RemoveAll(dir)
	log := slog.New(slog.NewTextHandler(progress, &slog.HandlerOptions{Level: slog.LevelWarn}))
	run := "bench/" + randomHex()
	hostPort, stopHost, err := hostServer()
	if err != nil {
		return Report{}, err
	}
	defer stopHost()
	copies := filepath.Join(dir, "copies")
	if err := os.Mkdir(copies, 0o700); err != nil {
		return Report{}, err
	}
	cfg.Egress.HostPorts = append(slices.Clone(cfg.Egress.HostPorts), hostPort)
	cfg.Host.AllowedRoots = append(slices.Clone(cfg.Host.AllowedRoots), copies)
	// Each engine has its own label: engines sharing one would adopt (and
	// reap) each other's containers.
	warm, err := startStack(ctx, cfg, filepath.Join(dir, "pool"), run+"/pool", log)
	if err != nil {
		return Report{}, err
	}
	warm.copies = copies
	defer func() { err = errors.Join(err, warm.close(ctx)) }()
	coldCfg := cfg
	coldCfg.Pool.Size = 0
	cold, err := startStack(ctx, coldCfg, filepath.Join(dir, "cold"), run+"/cold", log)
	if err != nil {
		return Report{}, err
	}
	defer func() { err = errors.Join(err, cold.close(ctx)) }()
	rep = Report{Image: cfg.DefaultImage, N: opts.N, Creates: max(3, opts.N/5), Machine: machine(ctx, warm),
		Labels: []string{run + "/pool", run + "/cold"}}
	if err := measureLatency(ctx, &rep, warm, progress); err != nil {
		return Report{}, err
	}
	if err := measureOps(ctx, &rep, warm, hostPort, progress); err != nil {
		return Report{}, err
	}
	if err := measurePool(ctx, &rep, warm, cold, progress); err != nil {
		return Report{}, err
	}
	if err := measureThroughput(ctx, &rep, warm, progress); err != nil {
		return Report{}, err
	}
	if opts.Idle > 0 {
		if err := measureIdle(ctx, &rep, warm, opts.Idle, progress); err != nil {
			return Report{}, err
		}
	}
	return rep, nil
}

// prepare fills the defaults: the bench image serves every language, and the
// pooled engine has a pool of at least 2 of it.
func prepare(opts *Options) (config.Config, io.Writer) {
	if opts.N <= 0 {
		opts.N = 100
	}
	cfg := config.Default()
	if opts.Config != nil {
		cfg = *opts.Config
	}
	if opts.Image != "" {
		cfg.DefaultImage = opts.Image
	}
	cfg.Images = map[string]string{}
	cfg.Pool.Size, cfg.Pool.Images = max(cfg.Pool.Size, 2), nil
	// The idle figures hold 100 sandboxes, and the throughput its clients'.
	cfg.Limits.MaxSandboxes = max(cfg.Limits.MaxSandboxes, 128)
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	return cfg, progress
}

// measureLatency times warm calls through the socket and per-call docker
// exec in one sandbox, then new sandboxes from the pool.
func measureLatency(ctx context.Context, rep *Report, warm *stack, progress io.Writer) error {
	c, err := dial(ctx, warm.path(), "sandtray-bench")
	if err != nil {
		return err
	}
	defer c.close()
	id, err := c.createSandbox(ctx, "")
	if err != nil {
		return err
	}
	if err := warm.waitPool(ctx); err != nil { // no fill competes with the warm calls
		return err
	}
	fmt.Fprintf(progress, "warm execute_code through the socket, %d calls\n", rep.N)
	if rep.Socket, err = timeCalls(ctx, rep.N, func(ctx context.Context) error { return c.runPrint(ctx, id) }); err != nil {
		return err
	}
	fmt.Fprintf(progress, "warm execute_code over HTTP, %d calls\n", rep.N)
	if rep.HTTP, err = timeHTTP(ctx, warm, id, rep.N); err != nil {
		return err
	}
	fmt.Fprintf(progress, "per-call docker exec, %d calls\n", rep.N)
	if rep.Direct, err = directExec(ctx, warm, id, rep.N); err != nil {
		return err
	}
	fmt.Fprintf(progress, "new sandbox to first result with the warm pool, %d sandboxes\n", rep.Creates)
	rep.Pool, err = createToFirstResult(ctx, warm, c, rep.Creates, "")
	return err
}

// measureThroughput runs N calls at each level of concurrency; each client
// has its own connection and its own sandbox.
func measureThroughput(ctx context.Context, rep *Report, warm *stack, progress io.Writer) error {
	most := slices.Max(Levels)
	fmt.Fprintf(progress, "connecting %d clients, each with its own sandbox\n", most)
	ws, err := newWorkers(ctx, warm, most)
	defer func() {
		for _, w := range ws {
			w.c.close()
		}
	}()
	if err != nil {
		return err
	}
	for _, n := range Levels {
		if err := warm.waitPool(ctx); err != nil { // no refill competes with the clients
			return err
		}
		fmt.Fprintf(progress, "%d concurrent clients, %d calls\n", n, max(rep.N, n))
		perSec, err := throughput(ctx, ws[:n], max(rep.N, n))
		if err != nil {
			return err
		}
		rep.Rates = append(rep.Rates, Rate{Clients: n, PerSecond: perSec})
	}
	return nil
}

// machine describes where the bench ran.
func machine(ctx context.Context, s *stack) string {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	snap, _ := s.eng.Watch(wctx).Next(wctx)
	return fmt.Sprintf("%s/%s, %d CPUs, Docker %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), snap.Docker.Version)
}

func randomHex() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}
