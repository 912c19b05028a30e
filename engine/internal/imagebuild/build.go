// Package imagebuild makes Sandtray's sandbox image on the Docker host with
// nothing but the sandtray binary and Docker: from the Dockerfile embedded
// in the binary (packaging/images) when Docker can pull its base image, and
// else from Debian's package mirror, reached from this host. The mirror
// build needs no root, no debootstrap and no Debian here (it works from
// macOS and Windows too): it reads the suite's signed index, resolves a
// minimal system with python3, Node.js and gcc, downloads and checks the
// .debs, unpacks the required ones into a root filesystem that Docker
// imports, and finishes in a container of it with dpkg, as debootstrap's
// second stage does. The finished container's files are imported as the
// image, in one layer.
package imagebuild

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/packaging/images"
)

// DefaultTag is the image Sandtray's default config names, and what Build
// makes unless told otherwise.
const DefaultTag = "sandtray/sandbox:latest"

// Wanted are the packages the mirror build installs beyond Debian's
// required ones: the languages Sandtray runs, the tools it uses, and a
// model's first tools (curl, git, jq, unzip), as the Dockerfile's image
// has them.
var Wanted = []string{"python3", "python-is-python3", "nodejs", "gcc", "g++", "libc6-dev", "make",
	"procps", "findutils", "ca-certificates", "bash", "tar", "curl", "git", "jq", "unzip"}

// Source is where the image comes from.
type Source string

// The sources: SourceAuto tries the registry first and falls back to the
// mirror.
const (
	SourceAuto     Source = "auto"
	SourceRegistry Source = "registry"
	SourceMirror   Source = "mirror"
)

// MirrorEnv names a Debian mirror to use instead of DefaultMirror.
const MirrorEnv = "SANDTRAY_DEBIAN_MIRROR"

// Defaults of Options.
const (
	DefaultMirror = "http://deb.debian.org/debian"
	DefaultSuite  = "bookworm"
)

// Docker is what the build asks of Docker (engine/runtime/docker's Client).
type Docker interface {
	Platform(ctx context.Context) (osName, arch string, err error)
	ImageExists(ctx context.Context, ref string) (bool, error)
	PullImage(ctx context.Context, ref string, progress func(runtime.PullProgress)) error
	BuildImage(ctx context.Context, buildContext io.Reader, tag string, out io.Writer) (string, error)
	ImportImage(ctx context.Context, rootfs io.Reader, ref string, changes []string, message string) (string, error)
	RunBuildStep(ctx context.Context, step runtime.BuildStep) (string, int, error)
	ExportContainer(ctx context.Context, id string) (io.ReadCloser, error)
	Remove(ctx context.Context, id string) error
	RemoveImage(ctx context.Context, ref string) error
}

// Options say what to build and how.
type Options struct {
	Tag       string // "" is DefaultTag
	Source    Source // "" is SourceAuto
	MirrorURL string // "" is DefaultMirror
	Suite     string // "" is DefaultSuite
	TempDir   string // where the .debs wait while building; "" is the system's
	Labels    map[string]string
	Progress  func(Progress) // nil: none
}

// Progress is where a build is: the step, how far through it (bytes or
// packages, Total 0 when unknown), and the latest line of output.
type Progress struct {
	Step        string
	Done, Total int64
	Bytes       bool // Done and Total count bytes, not packages
	Line        string
}

// Result is what a build made.
type Result struct {
	ImageID  string
	Source   Source // SourceRegistry or SourceMirror
	Packages int    // installed from the mirror; 0 for the registry
	Took     time.Duration
	Fallback string // why SourceAuto did not use the registry, if it did not
}

// Build makes the image. With SourceAuto, a base image that cannot be pulled, or
// a Dockerfile build that fails, falls back to the mirror; the Result says
// why. Containers and intermediate images it makes are removed, whatever
// happens; the tag is written only by a build that succeeded.
func Build(ctx context.Context, d Docker, o Options) (Result, error) {
	start := time.Now()
	o = o.withDefaults()
	var res Result
	if o.Source != SourceMirror {
		id, err := buildFromDockerfile(ctx, d, o)
		if err == nil {
			return Result{ImageID: id, Source: SourceRegistry, Took: time.Since(start)}, nil
		}
		if o.Source == SourceRegistry || ctx.Err() != nil {
			return Result{}, err
		}
		res.Fallback = err.Error()
		o.report(Progress{Step: "No registry answered; building from Debian's mirror instead", Line: err.Error()})
	}
	id, n, err := buildFromMirror(ctx, d, o)
	if err != nil {
		if res.Fallback != "" {
			return Result{}, fmt.Errorf("%w (the registry failed first: %s)", err, res.Fallback)
		}
		return Result{}, err
	}
	res.ImageID, res.Source, res.Packages, res.Took = id, SourceMirror, n, time.Since(start)
	return res, nil
}

func (o Options) withDefaults() Options {
	o.Tag = cmpOr(o.Tag, DefaultTag)
	o.Source = Source(cmpOr(string(o.Source), string(SourceAuto)))
	o.MirrorURL = cmpOr(cmpOr(o.MirrorURL, os.Getenv(MirrorEnv)), DefaultMirror)
	o.Suite = cmpOr(o.Suite, DefaultSuite)
	return o
}

func (o Options) report(p Progress) {
	if o.Progress != nil {
		o.Progress(p)
	}
}

// buildFromDockerfile pulls the embedded Dockerfile's base image when
// Docker lacks it, then builds the Dockerfile.
func buildFromDockerfile(ctx context.Context, d Docker, o Options) (string, error) {
	base := images.Base()
	has, err := d.ImageExists(ctx, base)
	if err != nil {
		return "", err
	}
	if !has {
		o.report(Progress{Step: "Pulling " + base})
		err := d.PullImage(ctx, base, func(p runtime.PullProgress) {
			o.report(Progress{Step: "Pulling " + base, Done: p.Current, Total: p.Total, Bytes: true,
				Line: strings.TrimSpace(p.Status + " " + p.ID)})
		})
		if err != nil {
			return "", fmt.Errorf("pull %s: %w", base, err)
		}
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(images.Dockerfile))})
	tw.Write(images.Dockerfile)
	tw.Close()
	o.report(Progress{Step: "Building from the Dockerfile"})
	lines := &lineWriter{fn: func(l string) { o.report(Progress{Step: "Building from the Dockerfile", Line: l}) }}
	id, err := d.BuildImage(ctx, &buf, o.Tag, lines)
	if err != nil {
		return "", fmt.Errorf("build the Dockerfile: %w", err)
	}
	return id, nil
}

// debArch is Debian's name for the daemon's architecture.
func debArch(arch string) (string, error) {
	switch arch {
	case "amd64", "x86_64":
		return "amd64", nil
	case "arm64", "aarch64":
		return "arm64", nil
	}
	return "", fmt.Errorf("Docker runs on %s; the mirror build knows amd64 and arm64 only", arch)
}

// buildFromMirror is the offline build; it returns the image's id and how
// many packages it has.
func buildFromMirror(ctx context.Context, d Docker, o Options) (string, int, error) {
	osName, arch, err := d.Platform(ctx)
	if err != nil {
		return "", 0, err
	}
	if osName != "linux" {
		return "", 0, fmt.Errorf("Docker runs %s containers; Sandtray's sandboxes are Linux containers (switch Docker to Linux containers)", osName)
	}
	if arch, err = debArch(arch); err != nil {
		return "", 0, err
	}
	keys, err := DebianKeyring()
	if err != nil {
		return "", 0, fmt.Errorf("read Debian's keys: %w", err)
	}
	m := &Mirror{URL: o.MirrorURL, Suite: o.Suite, Arch: arch, Keyring: keys}
	o.report(Progress{Step: "Reading " + o.Suite + "'s package index from " + o.MirrorURL})
	ix, err := m.Index(ctx)
	if err != nil {
		return "", 0, err
	}
	sel, err := Resolve(ix, Wanted)
	if err != nil {
		return "", 0, err
	}
	dir, err := os.MkdirTemp(o.TempDir, "sandtray-debs-")
	if err != nil {
		return "", 0, err
	}
	defer os.RemoveAll(dir)
	if err := download(ctx, m, sel.All(), dir, o.report); err != nil {
		return "", 0, err
	}
	id, err := firstStage(ctx, d, o, sel, dir, arch)
	if err != nil {
		return "", 0, err
	}
	defer d.RemoveImage(context.WithoutCancel(ctx), id)
	id, err = secondStage(ctx, d, o, id, len(sel.All()))
	return id, len(sel.All()), err
}

// firstStage imports the first stage's root filesystem, streamed as it is
// written, as an untagged image.
func firstStage(ctx context.Context, d Docker, o Options, sel Selection, dir, arch string) (string, error) {
	o.report(Progress{Step: "Unpacking Debian's required packages"})
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeFirstStage(pw, sel, dir, arch)) }()
	id, err := d.ImportImage(ctx, pr, "", nil, "sandtray image build: first stage")
	pr.CloseWithError(errors.New("import ended"))
	if err != nil {
		return "", fmt.Errorf("import the first stage: %w", err)
	}
	return id, nil
}

// secondStage runs stage2.sh in a container of the first stage and imports
// its files, less the .debs, as o.Tag.
func secondStage(ctx context.Context, d Docker, o Options, first string, packages int) (string, error) {
	step, done := "Installing Debian's core packages", int64(0)
	var tail []string
	lines := &lineWriter{fn: func(l string) {
		if s, ok := strings.CutPrefix(l, "step: "); ok {
			step = s
		}
		if strings.HasPrefix(l, "Setting up ") {
			done++
		}
		tail = append(tail, l)
		if len(tail) > 12 {
			tail = tail[1:]
		}
		o.report(Progress{Step: step, Done: min(done, int64(packages)), Total: int64(packages), Line: l})
	}}
	id, code, err := d.RunBuildStep(ctx, runtime.BuildStep{Image: first, Cmd: []string{"/bin/sh", "/" + stage2Dir + "/stage2.sh"},
		Env: []string{"MIRROR=" + o.MirrorURL, "SUITE=" + o.Suite}, Labels: o.Labels, Output: lines})
	if id != "" {
		defer d.Remove(context.WithoutCancel(ctx), id)
	}
	lines.Flush()
	if err != nil {
		return "", fmt.Errorf("install the packages: %w", err)
	}
	if code != 0 {
		return "", fmt.Errorf("installing the packages failed (exit %d) at %q; its last lines:\n%s", code, step, strings.Join(tail, "\n"))
	}
	o.report(Progress{Step: "Saving the image as " + o.Tag})
	exp, err := d.ExportContainer(ctx, id)
	if err != nil {
		return "", err
	}
	defer exp.Close()
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(filterExport(pw, exp)) }()
	img, err := d.ImportImage(ctx, pr, o.Tag, imageChanges, "sandtray sandbox image (Debian "+o.Suite+", from "+o.MirrorURL+")")
	pr.CloseWithError(errors.New("import ended"))
	if err != nil {
		return "", fmt.Errorf("save the image: %w", err)
	}
	return img, nil
}

// imageChanges are the image's config, as the Dockerfile's image has it.
var imageChanges = []string{
	"WORKDIR /workspace",
	"ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"ENV LANG=C.UTF-8",
	`CMD ["/bin/bash"]`,
}

// download fetches every package into dir/<name>.deb, four at a time.
func download(ctx context.Context, m *Mirror, ps []*Package, dir string, report func(Progress)) error {
	var total int64
	for _, p := range ps {
		total += p.Size
	}
	step := fmt.Sprintf("Downloading %d packages", len(ps))
	report(Progress{Step: step, Total: total, Bytes: true})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan *Package)
	type done struct {
		p   *Package
		err error
	}
	results := make(chan done)
	for range 4 {
		go func() {
			for p := range work {
				results <- done{p, fetchTo(ctx, m, p, filepath.Join(dir, p.Name+".deb"))}
			}
		}()
	}
	go func() { // every package goes out, so every result comes back; after a failure they fail fast
		defer close(work)
		for _, p := range ps {
			work <- p
		}
	}()
	var got int64
	var firstErr error
	for range ps {
		r := <-results
		if r.err != nil && firstErr == nil {
			firstErr = fmt.Errorf("download %s: %w", r.p.Name, r.err)
			cancel()
		}
		got += r.p.Size
		report(Progress{Step: step, Done: got, Total: total, Bytes: true, Line: r.p.Name + " " + r.p.Version})
	}
	return firstErr
}

func fetchTo(ctx context.Context, m *Mirror, p *Package, name string) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	err = m.Fetch(ctx, p, f)
	return errors.Join(err, f.Close())
}

// lineWriter calls fn with each whole line written to it.
type lineWriter struct {
	fn  func(string)
	buf []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexAny(w.buf, "\r\n")
		if i < 0 {
			return len(p), nil
		}
		if l := strings.TrimSpace(string(w.buf[:i])); l != "" {
			w.fn(l)
		}
		w.buf = w.buf[i+1:]
	}
}

// Flush passes on a last line without its newline.
func (w *lineWriter) Flush() {
	if l := strings.TrimSpace(string(w.buf)); l != "" {
		w.fn(l)
	}
	w.buf = nil
}

func cmpOr(v, fallback string) string {
	if v == "" {
		return fallback
	}
	return v
}
