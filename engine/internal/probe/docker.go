package probe

import (
	"context"
	"errors"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Report is what `sandtray doctor` reports of Docker: which engine the
// config and environment lead to, why, and what it is.
type Report struct {
	// Runtime is the container runtime the config chooses ([runtime] name),
	// and Lacks what it cannot do of the optional parts, each with why.
	Runtime    string
	Lacks      []string
	Host       string   // the endpoint, e.g. "unix:///var/run/docker.sock"
	Source     string   // where it came from: "DOCKER_HOST", "Colima", …
	Why        string   // why it was chosen
	PassedOver []string // endpoints tried first, each with why not
	Remote     bool     // reached over ssh or TCP: its files are not this host's

	Product       string // "Docker Engine", "Podman Engine", …
	Version       string
	API           string
	StorageDriver string
	Runtimes      []string

	Image        string // the config's default image
	ImagePresent bool   // the daemon has it; else the first sandbox pulls it

	GPU        sandbox.GPUStatus // whether sandboxes can have GPUs (see GPUs)
	GPUHolders []string          // sandboxes created with GPUs, as "name (gpus)"
	Toolkit    Toolkit           // the NVIDIA Container Toolkit on this host, when Docker runs here

	Err error // no engine answered (wraps sandbox.ErrUnavailable), or it failed to say what it is

	// When no engine answered: the endpoints that exist but did not
	// answer, and where the one endpoint tried was named (DOCKER_HOST, …)
	// when it was.
	Tried  []runtime.Tried
	Pinned string
}

// Timeout bounds Docker and Pool: discovery plus a few calls.
const Timeout = 45 * time.Second

// Docker finds Docker as an engine would with cfg and asks it what it is.
// It never creates anything.
func Docker(ctx context.Context, cfg config.Config) Report {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	p := Report{Image: cfg.DefaultImage, Runtime: cfg.RuntimeName()}
	cli, err := runtime.Connect(ctx, cfg.RuntimeName(), cfg.RuntimeHost())
	if err != nil {
		p.Err = err
		if ne, ok := errors.AsType[*runtime.NoEngineError](err); ok {
			p.Tried, p.Pinned = ne.Tried, ne.Pinned
		}
		return p
	}
	defer cli.Close()
	caps := runtime.CapabilitiesOf(cli)
	for _, x := range caps.Lacking() {
		p.Lacks = append(p.Lacks, caps.Missing(x).Error())
	}
	full := runtime.Complete(cli)
	ep := cli.Endpoint()
	p.Host, p.Source, p.Why, p.PassedOver, p.Remote = ep.Host, ep.Source, ep.Why, ep.Skipped, ep.Remote()
	if !p.Remote { // the toolkit that matters is the Docker host's
		p.Toolkit = FindToolkit(ctx)
	}
	d, err := cli.Daemon(ctx)
	p.Product, p.Version, p.API, p.StorageDriver, p.Runtimes = d.Product, d.Version, d.API, d.StorageDriver, d.Runtimes
	if err != nil {
		p.Err = err
		return p
	}
	if caps.Images {
		if p.ImagePresent, err = full.ImageExists(ctx, cfg.DefaultImage); err != nil {
			p.Err = err
		}
	} else {
		p.ImagePresent = true // no local image store: the runtime fetches images itself
	}
	p.GPU = GPUs(ctx, full)
	p.GPUHolders, _ = GPUHolders(ctx, cli) // a failure here shows in the other lines
	return p
}
