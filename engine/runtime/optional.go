package runtime

import (
	"context"
	"fmt"
	"io"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// The optional parts of a runtime. A runtime implements those it can; the
// engine finds them with a type assertion (or CapabilitiesOf) where it uses
// them, and does not offer what needs one the runtime lacks.

// Imager is a local image store the runtime creates containers from, and
// pulls into.
type Imager interface {
	ImageExists(ctx context.Context, ref string) (bool, error)
	PullImage(ctx context.Context, ref string, progress func(PullProgress)) error
	// SetPullLimit bounds the bytes one image pull may download (0: none).
	SetPullLimit(bytes int64)
	InspectImage(ctx context.Context, ref string) (Image, error)
	ImageDetails(ctx context.Context, ref string) (ImageDetails, error)
	ImageSize(ctx context.Context, ref string) (int64, error)
	// ImageEvents streams image events until ctx ends (as Events does).
	ImageEvents(ctx context.Context) (<-chan ImageEvent, <-chan error)
	ImagesLabeled(ctx context.Context, labels map[string]string) ([]LabeledImage, error)
	TagImage(ctx context.Context, src, ref string) error
	RemoveImage(ctx context.Context, ref string) error
	// RemoveUntagged removes image id if no tag names it any more.
	RemoveUntagged(ctx context.Context, id string) (bool, error)
}

// Builder makes images: from a build context, a root filesystem, or a
// command run to its end.
type Builder interface {
	BuildImage(ctx context.Context, buildContext io.Reader, tag string, out io.Writer) (string, error)
	ImportImage(ctx context.Context, rootfs io.Reader, ref string, changes []string, message string) (string, error)
	RunBuildStep(ctx context.Context, step BuildStep) (id string, exitCode int, err error)
}

// Committer captures a container's filesystem: what changed since its
// image, and an image of it (commit_sandbox, snapshots, forks, diffs).
type Committer interface {
	Diff(ctx context.Context, id string) ([]Change, error)
	Commit(ctx context.Context, id, tag string, cfg ImageConfig) (string, error)
}

// Pauser freezes every process of a container and thaws them.
type Pauser interface {
	Pause(ctx context.Context, id string) error
	Unpause(ctx context.Context, id string) error
}

// Networker attaches a running container to networks and detaches it.
type Networker interface {
	ConnectNetwork(ctx context.Context, id, network string) error
	DisconnectNetwork(ctx context.Context, id, network string) error
}

// LayerDisker tells where a container's writable layer lives and how big it
// is.
type LayerDisker interface {
	// Disk says where the container's writable layer lives, when it can.
	Disk(ctx context.Context, id string) (DiskInfo, error)
	// SizeRw is the size of the writable layer's files, as the runtime
	// computes it (slow: a fallback).
	SizeRw(ctx context.Context, id string) (int64, error)
}

// Renamer renames a container (a warm spare becomes a sandbox).
type Renamer interface {
	Rename(ctx context.Context, id, name string) error
}

// LimitUpdater changes a running container's limits.
type LimitUpdater interface {
	// UpdateLimits changes a running container's memory limit (MB) and CPU
	// limit (millicores, as CreateOptions.MilliCPUs); 0 leaves one as it is.
	UpdateLimits(ctx context.Context, id string, memoryMB, milliCPUs int64) error
}

// GPUProvider gives containers GPUs.
type GPUProvider interface {
	// GPUSupport says whether containers can be given GPUs, and how.
	GPUSupport(ctx context.Context) (GPUSupport, error)
}

// Attacher joins a container's main process's stdin and stdout.
type Attacher interface {
	// Attach joins a container created with CreateOptions.Attached, before
	// its start, to its main process's stdin and stdout, as a byte stream
	// (Read is its stdout; its stderr is set aside).
	Attach(ctx context.Context, id string) (io.ReadWriteCloser, error)
}

// Exporter streams a container's whole filesystem.
type Exporter interface {
	// ExportContainer is the container's whole filesystem as a tar stream.
	ExportContainer(ctx context.Context, id string) (io.ReadCloser, error)
}

// Full is a runtime with every optional part: what Docker provides, and
// what Complete makes of any runtime.
type Full interface {
	Runtime
	Imager
	Builder
	Committer
	Pauser
	Networker
	LayerDisker
	Renamer
	LimitUpdater
	GPUProvider
	Attacher
	Exporter
}

// A Capability is an optional part of a runtime, by what it lets Sandtray do.
type Capability string

// The capabilities, one per optional interface.
const (
	CapImages       Capability = "images"        // Imager
	CapBuild        Capability = "build"         // Builder
	CapCommit       Capability = "commit"        // Committer
	CapPause        Capability = "pause"         // Pauser
	CapNetworks     Capability = "networks"      // Networker
	CapLayerDisk    Capability = "layer disk"    // LayerDisker
	CapRename       Capability = "rename"        // Renamer
	CapUpdateLimits Capability = "update limits" // LimitUpdater
	CapGPU          Capability = "gpu"           // GPUProvider
	CapAttach       Capability = "attach"        // Attacher
	CapExport       Capability = "export"        // Exporter
)

// AllCapabilities lists every capability, in a stable order.
var AllCapabilities = []Capability{CapImages, CapBuild, CapCommit, CapPause, CapNetworks, CapLayerDisk,
	CapRename, CapUpdateLimits, CapGPU, CapAttach, CapExport}

// what is what a runtime without c cannot do, for messages.
var what = map[Capability]string{
	CapImages:       "keep or pull images",
	CapBuild:        "build images",
	CapCommit:       "diff or commit a sandbox's filesystem (commit_sandbox, snapshots, forks, diffs)",
	CapPause:        "pause a sandbox",
	CapNetworks:     "attach a sandbox to a network",
	CapLayerDisk:    "measure a sandbox's disk",
	CapRename:       "rename a container",
	CapUpdateLimits: "change a running sandbox's limits",
	CapGPU:          "give a sandbox GPUs",
	CapAttach:       "attach to a container's main process",
	CapExport:       "export a container's filesystem",
}

// Capabilities says which optional parts a runtime has.
type Capabilities struct {
	Runtime      string `json:"runtime"` // the runtime's name, e.g. "docker"
	Images       bool   `json:"images"`
	Build        bool   `json:"build"`
	Commit       bool   `json:"commit"`
	Pause        bool   `json:"pause"`
	Networks     bool   `json:"networks"`
	LayerDisk    bool   `json:"layer_disk"`
	Rename       bool   `json:"rename"`
	UpdateLimits bool   `json:"update_limits"`
	GPU          bool   `json:"gpu"`
	Attach       bool   `json:"attach"`
	Export       bool   `json:"export"`
}

// CapabilitiesOf says which optional interfaces rt implements. A runtime
// Complete made reports those of the runtime it completes.
func CapabilitiesOf(rt Runtime) Capabilities {
	if c, ok := rt.(*completed); ok {
		return c.caps
	}
	_, images := rt.(Imager)
	_, build := rt.(Builder)
	_, commit := rt.(Committer)
	_, pause := rt.(Pauser)
	_, networks := rt.(Networker)
	_, disk := rt.(LayerDisker)
	_, rename := rt.(Renamer)
	_, update := rt.(LimitUpdater)
	_, gpu := rt.(GPUProvider)
	_, attach := rt.(Attacher)
	_, export := rt.(Exporter)
	return Capabilities{Runtime: rt.Name(), Images: images, Build: build, Commit: commit, Pause: pause,
		Networks: networks, LayerDisk: disk, Rename: rename, UpdateLimits: update, GPU: gpu,
		Attach: attach, Export: export}
}

// Has reports whether the runtime has capability c.
func (c Capabilities) Has(x Capability) bool {
	switch x {
	case CapImages:
		return c.Images
	case CapBuild:
		return c.Build
	case CapCommit:
		return c.Commit
	case CapPause:
		return c.Pause
	case CapNetworks:
		return c.Networks
	case CapLayerDisk:
		return c.LayerDisk
	case CapRename:
		return c.Rename
	case CapUpdateLimits:
		return c.UpdateLimits
	case CapGPU:
		return c.GPU
	case CapAttach:
		return c.Attach
	case CapExport:
		return c.Export
	}
	return false
}

// Missing is nil when the runtime has x, else why not: an error wrapping
// sandbox.ErrUnsupported that names the runtime and what it cannot do.
func (c Capabilities) Missing(x Capability) error {
	if c.Has(x) {
		return nil
	}
	return Unsupported(c.Runtime, x)
}

// Why is "" when the runtime has x, else the sentence of Missing's error,
// for a person: `the "kube" runtime cannot pause a sandbox; choose …`.
func (c Capabilities) Why(x Capability) string {
	if c.Has(x) {
		return ""
	}
	return why(c.Runtime, x)
}

// Lacking lists the capabilities the runtime does not have.
func (c Capabilities) Lacking() []Capability {
	var out []Capability
	for _, x := range AllCapabilities {
		if !c.Has(x) {
			out = append(out, x)
		}
	}
	return out
}

// Unsupported is the error of a call needing capability x that the runtime
// named name lacks.
func Unsupported(name string, x Capability) error {
	return fmt.Errorf("%s: %w", why(name, x), sandbox.ErrUnsupported)
}

func why(name string, x Capability) string {
	w, ok := what[x]
	if !ok {
		w = string(x)
	}
	return fmt.Sprintf("the %q runtime cannot %s; a runtime that can is chosen with [runtime] name in config.toml", name, w)
}

// Complete returns rt with every optional part: rt itself when it has them
// all, else rt with a stand-in for each part it lacks, whose methods fail
// with Unsupported (and whose SetPullLimit does nothing). CapabilitiesOf
// still reports what rt itself has.
func Complete(rt Runtime) Full {
	if f, ok := rt.(Full); ok {
		return f
	}
	return &completed{Runtime: rt, caps: CapabilitiesOf(rt)}
}

// completed is a runtime and the stand-ins of the parts it lacks.
type completed struct {
	Runtime
	caps Capabilities
}

func (c *completed) no(x Capability) error { return Unsupported(c.caps.Runtime, x) }

func (c *completed) ImageExists(ctx context.Context, ref string) (bool, error) {
	if i, ok := c.Runtime.(Imager); ok {
		return i.ImageExists(ctx, ref)
	}
	return false, c.no(CapImages)
}

func (c *completed) PullImage(ctx context.Context, ref string, progress func(PullProgress)) error {
	if i, ok := c.Runtime.(Imager); ok {
		return i.PullImage(ctx, ref, progress)
	}
	return c.no(CapImages)
}

func (c *completed) SetPullLimit(bytes int64) {
	if i, ok := c.Runtime.(Imager); ok {
		i.SetPullLimit(bytes)
	}
}

func (c *completed) InspectImage(ctx context.Context, ref string) (Image, error) {
	if i, ok := c.Runtime.(Imager); ok {
		return i.InspectImage(ctx, ref)
	}
	return Image{}, c.no(CapImages)
}

func (c *completed) ImageDetails(ctx context.Context, ref string) (ImageDetails, error) {
	if i, ok := c.Runtime.(Imager); ok {
		return i.ImageDetails(ctx, ref)
	}
	return ImageDetails{}, c.no(CapImages)
}

func (c *completed) ImageSize(ctx context.Context, ref string) (int64, error) {
	if i, ok := c.Runtime.(Imager); ok {
		return i.ImageSize(ctx, ref)
	}
	return 0, c.no(CapImages)
}

func (c *completed) ImageEvents(ctx context.Context) (<-chan ImageEvent, <-chan error) {
	if i, ok := c.Runtime.(Imager); ok {
		return i.ImageEvents(ctx)
	}
	errs := make(chan error, 1)
	errs <- c.no(CapImages)
	close(errs)
	events := make(chan ImageEvent)
	close(events)
	return events, errs
}

func (c *completed) ImagesLabeled(ctx context.Context, labels map[string]string) ([]LabeledImage, error) {
	if i, ok := c.Runtime.(Imager); ok {
		return i.ImagesLabeled(ctx, labels)
	}
	return nil, c.no(CapImages)
}

func (c *completed) TagImage(ctx context.Context, src, ref string) error {
	if i, ok := c.Runtime.(Imager); ok {
		return i.TagImage(ctx, src, ref)
	}
	return c.no(CapImages)
}

func (c *completed) RemoveImage(ctx context.Context, ref string) error {
	if i, ok := c.Runtime.(Imager); ok {
		return i.RemoveImage(ctx, ref)
	}
	return c.no(CapImages)
}

func (c *completed) RemoveUntagged(ctx context.Context, id string) (bool, error) {
	if i, ok := c.Runtime.(Imager); ok {
		return i.RemoveUntagged(ctx, id)
	}
	return false, c.no(CapImages)
}

func (c *completed) BuildImage(ctx context.Context, buildContext io.Reader, tag string, out io.Writer) (string, error) {
	if b, ok := c.Runtime.(Builder); ok {
		return b.BuildImage(ctx, buildContext, tag, out)
	}
	return "", c.no(CapBuild)
}

func (c *completed) ImportImage(ctx context.Context, rootfs io.Reader, ref string, changes []string, message string) (string, error) {
	if b, ok := c.Runtime.(Builder); ok {
		return b.ImportImage(ctx, rootfs, ref, changes, message)
	}
	return "", c.no(CapBuild)
}

func (c *completed) RunBuildStep(ctx context.Context, step BuildStep) (string, int, error) {
	if b, ok := c.Runtime.(Builder); ok {
		return b.RunBuildStep(ctx, step)
	}
	return "", -1, c.no(CapBuild)
}

func (c *completed) Diff(ctx context.Context, id string) ([]Change, error) {
	if x, ok := c.Runtime.(Committer); ok {
		return x.Diff(ctx, id)
	}
	return nil, c.no(CapCommit)
}

func (c *completed) Commit(ctx context.Context, id, tag string, cfg ImageConfig) (string, error) {
	if x, ok := c.Runtime.(Committer); ok {
		return x.Commit(ctx, id, tag, cfg)
	}
	return "", c.no(CapCommit)
}

func (c *completed) Pause(ctx context.Context, id string) error {
	if p, ok := c.Runtime.(Pauser); ok {
		return p.Pause(ctx, id)
	}
	return c.no(CapPause)
}

func (c *completed) Unpause(ctx context.Context, id string) error {
	if p, ok := c.Runtime.(Pauser); ok {
		return p.Unpause(ctx, id)
	}
	return c.no(CapPause)
}

func (c *completed) ConnectNetwork(ctx context.Context, id, network string) error {
	if n, ok := c.Runtime.(Networker); ok {
		return n.ConnectNetwork(ctx, id, network)
	}
	return c.no(CapNetworks)
}

func (c *completed) DisconnectNetwork(ctx context.Context, id, network string) error {
	if n, ok := c.Runtime.(Networker); ok {
		return n.DisconnectNetwork(ctx, id, network)
	}
	return c.no(CapNetworks)
}

func (c *completed) Disk(ctx context.Context, id string) (DiskInfo, error) {
	if d, ok := c.Runtime.(LayerDisker); ok {
		return d.Disk(ctx, id)
	}
	return DiskInfo{}, c.no(CapLayerDisk)
}

func (c *completed) SizeRw(ctx context.Context, id string) (int64, error) {
	if d, ok := c.Runtime.(LayerDisker); ok {
		return d.SizeRw(ctx, id)
	}
	return 0, c.no(CapLayerDisk)
}

func (c *completed) Rename(ctx context.Context, id, name string) error {
	if r, ok := c.Runtime.(Renamer); ok {
		return r.Rename(ctx, id, name)
	}
	return c.no(CapRename)
}

func (c *completed) UpdateLimits(ctx context.Context, id string, memoryMB, milliCPUs int64) error {
	if u, ok := c.Runtime.(LimitUpdater); ok {
		return u.UpdateLimits(ctx, id, memoryMB, milliCPUs)
	}
	return c.no(CapUpdateLimits)
}

func (c *completed) GPUSupport(ctx context.Context) (GPUSupport, error) {
	if g, ok := c.Runtime.(GPUProvider); ok {
		return g.GPUSupport(ctx)
	}
	return GPUSupport{Detail: fmt.Sprintf("the %q runtime gives no GPUs", c.caps.Runtime)}, nil
}

func (c *completed) Attach(ctx context.Context, id string) (io.ReadWriteCloser, error) {
	if a, ok := c.Runtime.(Attacher); ok {
		return a.Attach(ctx, id)
	}
	return nil, c.no(CapAttach)
}

func (c *completed) ExportContainer(ctx context.Context, id string) (io.ReadCloser, error) {
	if x, ok := c.Runtime.(Exporter); ok {
		return x.ExportContainer(ctx, id)
	}
	return nil, c.no(CapExport)
}
