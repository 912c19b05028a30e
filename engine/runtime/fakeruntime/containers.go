package fakeruntime

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// container is one container of the fake daemon; the daemon's lock guards
// it.
type container struct {
	id, name            string
	opts                runtime.CreateOptions
	imageID             string
	labels              map[string]string
	state               string // created, running, paused, exited
	created, startedAt  time.Time
	exitCode            int
	oomKilled           bool
	oomKills            int64 // the cgroup's count, as the engine's probe reads it
	networks            []string
	files               memFS
	procs               map[*Proc]struct{}
	memoryMB, milliCPUs int64
	cpu                 uint64 // cumulative CPU time, ns (Stats)
	signals             []string
}

var validContainerName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]+$`)

// find resolves a container by id, name or unique id prefix. Callers hold
// d.mu.
func (d *daemon) find(ref string) (*container, bool) {
	if c, ok := d.containers[ref]; ok {
		return c, true
	}
	ref = strings.TrimPrefix(ref, "/")
	var found *container
	for id, c := range d.containers {
		if c.name == ref {
			return c, true
		}
		if ref != "" && strings.HasPrefix(id, ref) {
			if found != nil {
				return nil, false // ambiguous: Docker says no such container
			}
			found = c
		}
	}
	return found, found != nil
}

func noContainer(op, ref string) error {
	return fmt.Errorf("%s: %w (No such container: %s)", op, sandbox.ErrNotFound, ref)
}

// get is find, failing as Docker does. Callers hold d.mu.
func (d *daemon) get(op, ref string) (*container, error) {
	c, ok := d.find(ref)
	if !ok {
		return nil, noContainer(op, ref)
	}
	return c, nil
}

func (c *container) running() bool { return c.state == "running" }

// notRunning is the conflict of an operation a container must run for.
func notRunning(op string, c *container) error {
	if c.state == "paused" {
		return fmt.Errorf("%s: %w (container %s is paused, unpause the container before exec)", op, sandbox.ErrConflict, c.id)
	}
	return fmt.Errorf("%s: %w (container %s is not running)", op, sandbox.ErrConflict, c.id)
}

// Create creates a container of o, refusing what the Docker runtime
// refuses: a missing image (sandbox.ErrNotFound), a name in use
// (sandbox.ErrConflict), a bad name, a zero memory, CPU or pids limit, or
// a user the image does not have or that is root by another name
// (sandbox.ErrInvalid). The workdir and the tmpfs mount points exist in
// it, the workdir owned by o.User.
func (r *Runtime) Create(ctx context.Context, o runtime.CreateOptions) (string, error) {
	op := "create container from image " + o.Image
	if o.MemoryMB <= 0 || o.MilliCPUs < 10 || o.PidsLimit <= 0 {
		return "", fmt.Errorf("%s: a sandbox needs a memory, CPU and pids limit (got %d MB, %d millicores, %d pids): %w",
			op, o.MemoryMB, o.MilliCPUs, o.PidsLimit, sandbox.ErrInvalid)
	}
	if o.Name != "" && !validContainerName.MatchString(o.Name) {
		return "", fmt.Errorf("%s: %w (Invalid container name (%s))", op, sandbox.ErrInvalid, o.Name)
	}
	if err := r.lock(ctx, "Create"); err != nil {
		return "", err
	}
	defer r.unlock()
	d := r.d
	img, ok := d.image(o.Image)
	if !ok {
		return "", noImage(op, o.Image)
	}
	if o.Name != "" {
		if _, taken := d.find(o.Name); taken {
			return "", fmt.Errorf("%s: %w (Conflict. The container name \"/%s\" is already in use)", op, sandbox.ErrConflict, o.Name)
		}
	}
	files := img.files.clone()
	uid, gid := 0, 0
	if o.User != "" {
		var err error
		if uid, gid, err = lookupUser(files, o.User); err != nil {
			return "", fmt.Errorf("%s: %w", op, err)
		}
		if uid == 0 {
			return "", fmt.Errorf("%s: user %q is root: %w", op, o.User, sandbox.ErrInvalid)
		}
	}
	id := d.newID()
	name := o.Name
	if name == "" {
		name = "fake_" + id[:12]
	}
	if o.Workdir != "" {
		_ = files.mkdirAll(o.Workdir, 0o755, 0, 0, false)
		files[clean(o.Workdir)].uid, files[clean(o.Workdir)].gid = uid, gid
	}
	for p := range o.Tmpfs {
		_ = files.mkdirAll(p, 0o755, uid, gid, false)
	}
	network := o.Network
	if network == "" {
		network = sandbox.NetworkNone
	}
	// The image's env first, as Docker merges them.
	o.Labels, o.Env, o.Cmd = copyMap(o.Labels), append(slices.Clone(img.cfg.Env), o.Env...), slices.Clone(o.Cmd)
	c := &container{
		id: id, name: name, opts: o, imageID: img.cfg.ID, labels: o.Labels, state: "created",
		created: time.Now(), networks: []string{network}, files: files, procs: map[*Proc]struct{}{},
		memoryMB: o.MemoryMB, milliCPUs: o.MilliCPUs,
	}
	d.containers[id] = c
	d.emit(c, "create")
	return id, nil
}

// Start starts a created or stopped container; a running one is left as
// it is.
func (r *Runtime) Start(ctx context.Context, id string) error {
	if err := r.lock(ctx, "Start"); err != nil {
		return err
	}
	defer r.unlock()
	c, err := r.d.get("start container "+id, id)
	if err != nil {
		return err
	}
	switch c.state {
	case "running":
		return nil
	case "paused":
		return fmt.Errorf("start container %s: %w (cannot start a paused container, try unpause instead)", id, sandbox.ErrConflict)
	}
	c.state, c.startedAt, c.exitCode, c.oomKilled = "running", time.Now(), 0, false
	r.d.emit(c, "start")
	return nil
}

// end ends a running (or paused) container's run with code: its processes
// are killed. Callers hold d.mu.
func (d *daemon) end(c *container, code int, actions ...string) {
	for p := range c.procs {
		p.kill()
	}
	c.state, c.exitCode = "exited", code
	d.emit(c, actions...)
}

// Stop stops a running container (its main process ends on SIGTERM: exit
// code 143); a stopped one is left as it is.
func (r *Runtime) Stop(ctx context.Context, id string, timeout time.Duration) error {
	if err := r.lock(ctx, "Stop"); err != nil {
		return err
	}
	defer r.unlock()
	c, err := r.d.get("stop container "+id, id)
	if err != nil {
		return err
	}
	if c.running() || c.state == "paused" {
		r.d.end(c, 143, "kill", "die", "stop")
	}
	return nil
}

// Kill kills a running container (exit code 137); one that does not run
// is sandbox.ErrConflict.
func (r *Runtime) Kill(ctx context.Context, id string) error {
	if err := r.lock(ctx, "Kill"); err != nil {
		return err
	}
	defer r.unlock()
	c, err := r.d.get("kill container "+id, id)
	if err != nil {
		return err
	}
	if !c.running() && c.state != "paused" {
		return notRunning("kill container "+id, c)
	}
	r.d.end(c, 137, "kill", "die")
	return nil
}

// Signal records sig (Signals lists them); SIGKILL and SIGTERM end the
// container as Kill and Stop do. One that does not run is
// sandbox.ErrConflict.
func (r *Runtime) Signal(ctx context.Context, id, sig string) error {
	op := "signal " + sig + " to container " + id
	if err := r.lock(ctx, "Signal"); err != nil {
		return err
	}
	defer r.unlock()
	c, err := r.d.get(op, id)
	if err != nil {
		return err
	}
	if !c.running() && c.state != "paused" {
		return notRunning(op, c)
	}
	c.signals = append(c.signals, sig)
	switch strings.TrimPrefix(sig, "SIG") {
	case "KILL":
		r.d.end(c, 137, "kill", "die")
	case "TERM":
		r.d.end(c, 143, "kill", "die")
	}
	return nil
}

// Signals lists the signals Signal sent to container id.
func (r *Runtime) Signals(id string) []string {
	r.d.mu.Lock()
	defer r.d.mu.Unlock()
	if c, ok := r.d.find(id); ok {
		return slices.Clone(c.signals)
	}
	return nil
}

// Die ends a running container's run as if its main process exited with
// code on its own (oomKilled: killed for memory, with an oom event and
// the cgroup's OOM-kill count raised), as a crash or the kernel's OOM
// killer would.
func (r *Runtime) Die(id string, code int, oomKilled bool) error {
	if err := r.lock(nil, "Die"); err != nil {
		return err
	}
	defer r.unlock()
	c, err := r.d.get("die", id)
	if err != nil {
		return err
	}
	if !c.running() {
		return notRunning("die", c)
	}
	if oomKilled {
		c.oomKills++
		r.d.emit(c, "oom")
	}
	r.d.end(c, code, "die")
	c.oomKilled = oomKilled
	return nil
}

// Remove force-removes a container, running or not; a missing one counts
// as removed.
func (r *Runtime) Remove(ctx context.Context, id string) error {
	if err := r.lock(ctx, "Remove"); err != nil {
		return err
	}
	defer r.unlock()
	c, ok := r.d.find(id)
	if !ok {
		return nil
	}
	if c.running() || c.state == "paused" {
		r.d.end(c, 137, "kill", "die")
	}
	delete(r.d.containers, c.id)
	r.d.emit(c, "destroy")
	return nil
}

// Rename gives a container a new name; one another container has is
// sandbox.ErrConflict.
func (r *Runtime) Rename(ctx context.Context, id, name string) error {
	op := fmt.Sprintf("rename container %s to %s", id, name)
	if !validContainerName.MatchString(name) {
		return fmt.Errorf("%s: %w (Invalid container name (%s))", op, sandbox.ErrInvalid, name)
	}
	if err := r.lock(ctx, "Rename"); err != nil {
		return err
	}
	defer r.unlock()
	c, err := r.d.get(op, id)
	if err != nil {
		return err
	}
	if other, ok := r.d.find(name); ok && other.name == name && other != c {
		return fmt.Errorf("%s: %w (Conflict. The container name \"/%s\" is already in use)", op, sandbox.ErrConflict, name)
	}
	c.name = name
	r.d.emit(c, "rename")
	return nil
}

func (c *container) view(full bool) runtime.Container {
	out := runtime.Container{
		ID: c.id, Name: c.name, Image: c.opts.Image, ImageID: c.imageID, Labels: copyMap(c.labels),
		State: runtime.State(c.state), Created: c.created,
	}
	if full {
		out.ExitCode, out.OOMKilled = c.exitCode, c.oomKilled
		out.Networks = slices.Clone(c.networks)
		slices.Sort(out.Networks)
		out.ReadOnlyRoot, out.Init, out.StartedAt = c.opts.ReadOnlyRoot, !c.opts.Attached && c.opts.Agent == nil, c.startedAt
		out.Agent = c.opts.Agent != nil
	}
	return out
}

// Inspect reports a container by id, unique id prefix or name.
func (r *Runtime) Inspect(ctx context.Context, id string) (runtime.Container, error) {
	if err := r.lock(ctx, "Inspect"); err != nil {
		return runtime.Container{}, err
	}
	defer r.unlock()
	c, err := r.d.get("inspect container "+id, id)
	if err != nil {
		return runtime.Container{}, err
	}
	return c.view(true), nil
}

// List lists the containers carrying every label of labels, newest first;
// all includes those not running. As Docker's list, it carries no exit
// codes nor networks.
func (r *Runtime) List(ctx context.Context, labels map[string]string, all bool) ([]runtime.Container, error) {
	if err := r.lock(ctx, "List"); err != nil {
		return nil, err
	}
	defer r.unlock()
	var out []runtime.Container
	for _, c := range r.d.containers {
		if hasLabels(c.labels, labels) && (all || c.running() || c.state == "paused") {
			out = append(out, c.view(false))
		}
	}
	slices.SortFunc(out, func(a, b runtime.Container) int {
		if c := b.Created.Compare(a.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// UpdateLimits changes a container's memory and CPU limits (a zero leaves
// one as it is).
func (r *Runtime) UpdateLimits(ctx context.Context, id string, memoryMB, milliCPUs int64) error {
	if err := r.lock(ctx, "UpdateLimits"); err != nil {
		return err
	}
	defer r.unlock()
	c, err := r.d.get("update limits of container "+id, id)
	if err != nil {
		return err
	}
	if memoryMB > 0 {
		c.memoryMB = memoryMB
	}
	if milliCPUs > 0 {
		c.milliCPUs = milliCPUs
	}
	r.d.emit(c, "update")
	return nil
}

// Limits reports a container's memory and CPU limits now.
func (r *Runtime) Limits(id string) (memoryMB, milliCPUs int64, err error) {
	r.d.mu.Lock()
	defer r.d.mu.Unlock()
	c, err := r.d.get("limits of container "+id, id)
	if err != nil {
		return 0, 0, err
	}
	return c.memoryMB, c.milliCPUs, nil
}

// ConnectNetwork attaches a container to a network; one on "none" cannot
// join another (sandbox.ErrInvalid), and one already there is
// sandbox.ErrConflict, as Docker has them.
func (r *Runtime) ConnectNetwork(ctx context.Context, id, network string) error {
	op := fmt.Sprintf("connect container %s to network %s", id, network)
	if err := r.lock(ctx, "ConnectNetwork"); err != nil {
		return err
	}
	defer r.unlock()
	c, err := r.d.get(op, id)
	if err != nil {
		return err
	}
	switch {
	case slices.Contains(c.networks, network):
		return fmt.Errorf("%s: %w (endpoint already exists in network %s)", op, sandbox.ErrConflict, network)
	case slices.Contains(c.networks, sandbox.NetworkNone) || (network == sandbox.NetworkNone && len(c.networks) > 0):
		return fmt.Errorf("%s: %w (container cannot be connected to multiple networks with one of the networks in private (none) mode)", op, sandbox.ErrInvalid)
	}
	c.networks = append(c.networks, network)
	return nil
}

// DisconnectNetwork detaches a container from a network; one it is not on
// is sandbox.ErrNotFound.
func (r *Runtime) DisconnectNetwork(ctx context.Context, id, network string) error {
	op := fmt.Sprintf("disconnect container %s from network %s", id, network)
	if err := r.lock(ctx, "DisconnectNetwork"); err != nil {
		return err
	}
	defer r.unlock()
	c, err := r.d.get(op, id)
	if err != nil {
		return err
	}
	if !slices.Contains(c.networks, network) {
		return fmt.Errorf("%s: %w (container is not connected to network %s)", op, sandbox.ErrNotFound, network)
	}
	c.networks = slices.DeleteFunc(c.networks, func(n string) bool { return n == network })
	return nil
}

// Disk has no writable-layer folder to give.
func (r *Runtime) Disk(ctx context.Context, id string) (runtime.DiskInfo, error) {
	if err := r.lock(ctx, "Disk"); err != nil {
		return runtime.DiskInfo{}, err
	}
	defer r.unlock()
	_, err := r.d.get("inspect container "+id, id)
	return runtime.DiskInfo{}, err
}

// SizeRw is the size of the files written in the container.
func (r *Runtime) SizeRw(ctx context.Context, id string) (int64, error) {
	if err := r.lock(ctx, "SizeRw"); err != nil {
		return 0, err
	}
	defer r.unlock()
	c, err := r.d.get("size of container "+id, id)
	if err != nil {
		return 0, err
	}
	return c.files.writtenSize(), nil
}

// TmpfsMounts lists the container's tmpfs mount points, sorted.
func (r *Runtime) TmpfsMounts(ctx context.Context, id string) ([]string, error) {
	if err := r.lock(ctx, "TmpfsMounts"); err != nil {
		return nil, err
	}
	defer r.unlock()
	c, err := r.d.get("inspect container "+id, id)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(c.opts.Tmpfs))
	for m := range c.opts.Tmpfs {
		out = append(out, path.Clean(m))
	}
	slices.Sort(out)
	return out, nil
}

// Pause freezes a running container: execs are refused until Unpause.
func (r *Runtime) Pause(ctx context.Context, id string) error {
	if err := r.lock(ctx, "Pause"); err != nil {
		return err
	}
	defer r.unlock()
	c, err := r.d.get("pause container "+id, id)
	if err != nil {
		return err
	}
	if !c.running() {
		return notRunning("pause container "+id, c)
	}
	c.state = "paused"
	r.d.emit(c, "pause")
	return nil
}

// Unpause thaws a paused container.
func (r *Runtime) Unpause(ctx context.Context, id string) error {
	if err := r.lock(ctx, "Unpause"); err != nil {
		return err
	}
	defer r.unlock()
	c, err := r.d.get("unpause container "+id, id)
	if err != nil {
		return err
	}
	if c.state != "paused" {
		return fmt.Errorf("unpause container %s: %w (container %s is not paused)", id, sandbox.ErrConflict, id)
	}
	c.state = "running"
	r.d.emit(c, "unpause")
	return nil
}

// StatPath describes a path in a container, not following a final
// symlink; a missing one is sandbox.ErrNotFound.
func (r *Runtime) StatPath(ctx context.Context, id, p string) (runtime.PathStat, error) {
	op := fmt.Sprintf("stat %s in container %s", p, id)
	if err := r.lock(ctx, "StatPath"); err != nil {
		return runtime.PathStat{}, err
	}
	defer r.unlock()
	c, err := r.d.get(op, id)
	if err != nil {
		return runtime.PathStat{}, err
	}
	n, ok := c.files[clean(p)]
	if !ok {
		return runtime.PathStat{}, fmt.Errorf("%s: %w (Could not find the file %s in container %s)", op, sandbox.ErrNotFound, p, id)
	}
	return n.stat(path.Base(clean(p))), nil
}

// CopyTo extracts a tar stream into the existing folder dstDir of a
// container (see memFS.extract).
func (r *Runtime) CopyTo(ctx context.Context, id, dstDir string, tarStream io.Reader) error {
	op := fmt.Sprintf("copy into %s in container %s", dstDir, id)
	data, err := io.ReadAll(tarStream) // outside the lock: the reader may be slow
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := r.lock(ctx, "CopyTo"); err != nil {
		return err
	}
	defer r.unlock()
	c, err := r.d.get(op, id)
	if err != nil {
		return err
	}
	if c.opts.ReadOnlyRoot && !c.onTmpfs(dstDir) {
		return fmt.Errorf("%s: %w (container rootfs is marked read-only)", op, sandbox.ErrForbidden)
	}
	files := c.files.clone() // all or nothing, as one extraction
	if err := files.extract(dstDir, bytes.NewReader(data)); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	c.files = files
	return nil
}

func (c *container) onTmpfs(p string) bool {
	p = clean(p)
	for m := range c.opts.Tmpfs {
		m = clean(m)
		if p == m || strings.HasPrefix(p, m+"/") {
			return true
		}
	}
	return false
}

// CopyFrom returns a tar stream of a path in a container and its stat.
func (r *Runtime) CopyFrom(ctx context.Context, id, p string) (io.ReadCloser, runtime.PathStat, error) {
	op := fmt.Sprintf("copy %s from container %s", p, id)
	if err := r.lock(ctx, "CopyFrom"); err != nil {
		return nil, runtime.PathStat{}, err
	}
	defer r.unlock()
	c, err := r.d.get(op, id)
	if err != nil {
		return nil, runtime.PathStat{}, err
	}
	data, st, err := c.files.archive(p)
	if err != nil {
		return nil, runtime.PathStat{}, fmt.Errorf("%s: %w", op, err)
	}
	return io.NopCloser(bytes.NewReader(data)), st, nil
}

// ExportContainer is a container's whole filesystem as a tar stream.
func (r *Runtime) ExportContainer(ctx context.Context, id string) (io.ReadCloser, error) {
	if err := r.lock(ctx, "ExportContainer"); err != nil {
		return nil, err
	}
	defer r.unlock()
	c, err := r.d.get("export container "+id, id)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range c.files.under("/") {
		if err := writeEntry(tw, strings.TrimPrefix(p, "/"), c.files[p]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return io.NopCloser(&buf), nil
}

// UserIDs resolves user against the container's /etc/passwd and
// /etc/group as runc does: a numeric user is a uid, and without a group
// the gid is the user's primary one (0 for a uid passwd does not list); a
// name the container does not have is sandbox.ErrInvalid.
func (r *Runtime) UserIDs(ctx context.Context, id, user string) (int, int, error) {
	if err := r.lock(ctx, "UserIDs"); err != nil {
		return 0, 0, err
	}
	defer r.unlock()
	c, err := r.d.get("read the users of container "+id, id)
	if err != nil {
		return 0, 0, err
	}
	return lookupUser(c.files, user)
}

// lookupUser resolves a Docker user spec against files' account files.
func lookupUser(files memFS, user string) (uid, gid int, err error) {
	name, group, _ := strings.Cut(user, ":")
	field := func(file, key string, col int) (int, bool) {
		n, ok := files[file]
		if !ok {
			return 0, false
		}
		for _, line := range strings.Split(string(n.data), "\n") {
			f := strings.Split(line, ":")
			if len(f) > col && f[0] == key {
				v, err := strconv.Atoi(f[col])
				return v, err == nil
			}
		}
		return 0, false
	}
	if v, err := strconv.Atoi(name); err == nil {
		uid = v
		gid, _ = primaryGroup(files, uid)
	} else {
		var ok bool
		if uid, ok = field("/etc/passwd", name, 2); !ok {
			return 0, 0, fmt.Errorf("unable to find user %s: no matching entries in passwd file: %w", name, sandbox.ErrInvalid)
		}
		gid, _ = field("/etc/passwd", name, 3)
	}
	if group != "" {
		if v, err := strconv.Atoi(group); err == nil {
			gid = v
		} else if v, ok := field("/etc/group", group, 2); ok {
			gid = v
		} else {
			return 0, 0, fmt.Errorf("unable to find group %s: no matching entries in group file: %w", group, sandbox.ErrInvalid)
		}
	}
	return uid, gid, nil
}

// primaryGroup is the gid /etc/passwd gives uid.
func primaryGroup(files memFS, uid int) (int, bool) {
	n, ok := files["/etc/passwd"]
	if !ok {
		return 0, false
	}
	for _, line := range strings.Split(string(n.data), "\n") {
		f := strings.Split(line, ":")
		if len(f) > 3 && f[2] == strconv.Itoa(uid) {
			g, err := strconv.Atoi(f[3])
			return g, err == nil
		}
	}
	return 0, false
}

// Stats samples a container: CPU time that grows with its processes, a
// memory use of a few MB plus its written files, and its pids. A
// container that does not run reads zero, as Docker's does.
func (r *Runtime) Stats(ctx context.Context, id string) (runtime.StatsSample, error) {
	if err := r.lock(ctx, "Stats"); err != nil {
		return runtime.StatsSample{}, err
	}
	defer r.unlock()
	c, err := r.d.get("stats of container "+id, id)
	if err != nil {
		return runtime.StatsSample{}, err
	}
	return c.sample(), nil
}

const onlineCPUs = 4

// sample is c's next stats sample. Callers hold d.mu.
func (c *container) sample() runtime.StatsSample {
	now := time.Now()
	if !c.running() {
		return runtime.StatsSample{Read: now}
	}
	c.cpu += uint64(1e6 + 20e6*len(c.procs))
	return runtime.StatsSample{
		Read: now, CPUTotal: c.cpu, SystemCPU: uint64(now.UnixNano()) * onlineCPUs, OnlineCPUs: onlineCPUs,
		MemoryUsage: uint64(8<<20+c.files.writtenSize()) + uint64(len(c.procs))<<20,
		MemoryLimit: uint64(c.memoryMB) << 20, MemoryStats: map[string]uint64{"inactive_file": 0, "anon": 8 << 20},
		Pids: 1 + uint64(len(c.procs)),
	}
}

// StatsEvery is how often StreamStats samples.
var StatsEvery = time.Second

// StreamStats calls fn with a sample every StatsEvery until ctx ends or the
// container stops running.
func (r *Runtime) StreamStats(ctx context.Context, id string, fn func(runtime.StatsSample)) error {
	t := time.NewTicker(StatsEvery)
	defer t.Stop()
	for {
		if err := r.lock(ctx, "StreamStats"); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		c, err := r.d.get("stream stats of container "+id, id)
		if err != nil {
			r.unlock()
			return err
		}
		if !c.running() {
			r.unlock()
			return nil
		}
		s := c.sample()
		r.unlock()
		fn(s)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
