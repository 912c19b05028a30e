package execgate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/internal/agentclient"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// The link: where the engine and its sandboxes share a host (a Linux engine
// on a local daemon; see EnableLinks), each sandbox gets a folder of the
// engine's own, <dir>/<name>, mounted read-only at runtime.LinkDir, where
// the engine listens on a unix socket for that sandbox alone. The agent,
// PID 1, dials it at its start and when the engine signals it (SIGUSR1);
// the session then runs over that socket, with no daemon between the two
// processes: a round trip is a fraction of an attachment's or an exec's.
//
// Only the container's PID 1 is taken at the other end (the kernel's peer
// credentials against the runtime's pid of the container's init): any
// process of the sandbox can dial the socket, and none but the agent is
// served. The folder is the sandbox's own, so no sandbox reaches another's
// socket, and it is read-only in the sandbox. A sandbox whose agent never
// dials (a runtime that cannot carry a host socket in, such as gVisor) is
// given up after one wait, and served by an exec as before.

// linkWait is how long a session's start waits for the agent to dial.
const linkWait = 2 * time.Second

// maxSocketPath bounds a link socket's path (sun_path holds 108 bytes on
// Linux, 104 on the BSDs): a longer one is no link.
const maxSocketPath = 100

// links are the gate's links, by container id.
type links struct {
	mu  sync.Mutex
	dir string           // guarded by mu: "" while off
	m   map[string]*link // guarded by mu: nil for a container known to have none
}

// link is one sandbox's socket.
type link struct {
	name   string // its folder's name under links.dir (sandbox.LabelLink)
	ln     *net.UnixListener
	ready  chan struct{} // guarded by links.mu: closed (and made anew) when a session arrives
	failed bool          // guarded by links.mu: the agent did not dial once asked; exec from then on
}

// EnableLinks links the gate to the sandboxes it creates from now on (and to
// those it made before, on their next session), with their sockets under
// dir, a folder of the engine's own (made private).
func (x *Runtime) EnableLinks(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("make the sandboxes' link folder: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("make the sandboxes' link folder private: %w", err)
	}
	x.links.mu.Lock()
	x.links.dir = dir
	x.links.mu.Unlock()
	return nil
}

// SweepLinks removes the link folders that no container names any more
// (their sandboxes were removed while no engine listened on them, or by
// an engine that had not made them).
func (x *Runtime) SweepLinks(ctx context.Context) error {
	x.links.mu.Lock()
	dir := x.links.dir
	x.links.mu.Unlock()
	if dir == "" {
		return nil
	}
	ctrs, err := x.Full.List(ctx, map[string]string{sandbox.LabelLink: ""}, true)
	if err != nil {
		return err
	}
	named := map[string]bool{}
	for _, c := range ctrs {
		named[c.Labels[sandbox.LabelLink]] = true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, d := range entries {
		if !named[d.Name()] {
			_ = os.RemoveAll(filepath.Join(dir, d.Name()))
		}
	}
	return nil
}

// Linking reports whether the gate links to its sandboxes.
func (x *Runtime) Linking() bool {
	x.links.mu.Lock()
	defer x.links.mu.Unlock()
	return x.links.dir != ""
}

// Create creates a container; one that has the agent (and runs under the
// daemon's own runtime) gets its link when the gate links.
func (x *Runtime) Create(ctx context.Context, o runtime.CreateOptions) (string, error) {
	if o.Agent == nil || o.Runtime != "" || !x.Linking() {
		return x.Full.Create(ctx, o)
	}
	name := sandbox.RandomHex(6)
	l, err := x.listen(name)
	if err != nil {
		x.logger().Warn("a new sandbox gets no link: its session is an exec", "err", err)
		return x.Full.Create(ctx, o)
	}
	o.LinkDir = filepath.Dir(l.ln.Addr().String())
	o.Labels = maps.Clone(o.Labels)
	if o.Labels == nil {
		o.Labels = map[string]string{}
	}
	o.Labels[sandbox.LabelLink] = name
	id, err := x.Full.Create(ctx, o)
	if err != nil {
		l.close(true)
		return "", err
	}
	x.keep(id, l)
	return id, nil
}

// listen makes link folder name and listens on its socket (again, for a
// link made before the engine restarted).
func (x *Runtime) listen(name string) (*link, error) {
	x.links.mu.Lock()
	dir := x.links.dir
	x.links.mu.Unlock()
	if dir == "" {
		return nil, errors.New("the gate does not link")
	}
	folder := filepath.Join(dir, name)
	sock := filepath.Join(folder, filepath.Base(runtime.LinkSocket))
	if len(sock) > maxSocketPath {
		return nil, fmt.Errorf("the link's socket path %s is longer than a socket's %d bytes", sock, maxSocketPath)
	}
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return nil, err
	}
	_ = os.Remove(sock) // one left by an engine that ended
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		_ = os.RemoveAll(folder)
		return nil, err
	}
	ln.SetUnlinkOnClose(false)
	// The agent runs as the sandbox's user, whoever that is; the folder
	// above is private to the engine's user on the host.
	if err := os.Chmod(sock, 0o666); err != nil {
		ln.Close()
		_ = os.RemoveAll(folder)
		return nil, err
	}
	return &link{name: name, ln: ln, ready: make(chan struct{})}, nil
}

// close stops listening, and removes the folder when the sandbox is gone.
func (l *link) close(remove bool) {
	_ = l.ln.Close()
	if remove {
		_ = os.RemoveAll(filepath.Dir(l.ln.Addr().String()))
	}
}

// keep makes l container id's link and serves it.
func (x *Runtime) keep(id string, l *link) {
	x.links.mu.Lock()
	if x.links.m == nil {
		x.links.m = map[string]*link{}
	}
	old := x.links.m[id]
	x.links.m[id] = l
	x.links.mu.Unlock()
	if old != nil {
		old.close(false)
	}
	go x.accept(id, l)
}

// accept takes the connections on id's link while it listens.
func (x *Runtime) accept(id string, l *link) {
	for {
		c, err := l.ln.AcceptUnix()
		if err != nil {
			return
		}
		go x.take(id, l, c)
	}
}

// take makes c id's session when it comes from the container's PID 1 and
// the container has no live session; else it closes c.
func (x *Runtime) take(id string, l *link, c *net.UnixConn) {
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	defer cancel()
	pid, ok := peerPid(c)
	if !ok || pid <= 0 {
		c.Close()
		return
	}
	ctr, err := x.Full.Inspect(ctx, id)
	if err != nil || ctr.Pid != pid {
		x.logger().Debug("refused a connection on a sandbox's link: not from its agent", "sandbox", sandbox.ShortID(id), "pid", pid)
		c.Close()
		return
	}
	if x.live(id) {
		c.Close()
		return
	}
	s, err := agentclient.New(ctx, c, x.logger().With("sandbox", sandbox.ShortID(id)))
	if err != nil {
		c.Close()
		return
	}
	x.sess.mu.Lock()
	if cur := x.sess.m[id]; cur != nil && !cur.Closed() {
		x.sess.mu.Unlock()
		s.Close()
		return
	}
	x.sess.m[id] = s
	x.sess.mu.Unlock()
	x.links.mu.Lock()
	close(l.ready)
	l.ready = make(chan struct{})
	x.links.mu.Unlock()
}

// live reports whether container id has a live session.
func (x *Runtime) live(id string) bool {
	x.sess.mu.Lock()
	defer x.sess.mu.Unlock()
	s := x.sess.m[id]
	return s != nil && !s.Closed()
}

// linkSession waits for container id's agent to come on its link, asking it
// to (SIGUSR1), and returns the session it made; nil when the container has
// no link, or its agent did not come (then never waited for again).
func (x *Runtime) linkSession(ctx context.Context, id string) *agentclient.Session {
	l := x.linkOf(ctx, id)
	if l == nil {
		return nil
	}
	// The wait is the link's own: a caller whose deadline comes first gives
	// up alone, and the link stays for the next session.
	wait := time.NewTimer(linkWait)
	defer wait.Stop()
	asked := false
	for {
		x.links.mu.Lock()
		ready := l.ready
		x.links.mu.Unlock()
		x.sess.mu.Lock()
		s := x.sess.m[id]
		x.sess.mu.Unlock()
		if s != nil && !s.Closed() {
			return s
		}
		if !asked {
			asked = true
			if err := x.Full.Signal(ctx, id, "SIGUSR1"); err != nil {
				return nil // not running: the exec says so
			}
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return nil
		case <-wait.C:
			x.links.mu.Lock()
			l.failed = true
			x.links.mu.Unlock()
			x.logger().Debug("a sandbox's agent did not come on its link: its sessions are execs", "sandbox", sandbox.ShortID(id))
			return nil
		}
	}
}

// linkOf is container id's link: the one the gate made, or, for a sandbox
// made before the engine restarted, its folder listened on again.
func (x *Runtime) linkOf(ctx context.Context, id string) *link {
	x.links.mu.Lock()
	l, known := x.links.m[id]
	dir := x.links.dir
	x.links.mu.Unlock()
	if known {
		if l == nil || l.failed {
			return nil
		}
		return l
	}
	if dir == "" {
		return nil
	}
	ctr, err := x.Full.Inspect(ctx, id)
	if err != nil {
		return nil
	}
	name := ctr.Labels[sandbox.LabelLink]
	if !validLinkName(name) {
		x.links.mu.Lock()
		if _, ok := x.links.m[id]; !ok {
			if x.links.m == nil {
				x.links.m = map[string]*link{}
			}
			x.links.m[id] = nil // none: ask no more
		}
		x.links.mu.Unlock()
		return nil
	}
	if l, err = x.listen(name); err != nil {
		x.logger().Debug("listen on a sandbox's link again", "sandbox", sandbox.ShortID(id), "err", err)
		return nil
	}
	x.keep(id, l)
	return l
}

// validLinkName: twelve lowercase hex digits, as Create names them.
func validLinkName(s string) bool {
	if len(s) != 12 {
		return false
	}
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}

// dropLink ends container id's link; remove deletes its folder (the
// container is gone).
func (x *Runtime) dropLink(id string, remove bool) {
	x.links.mu.Lock()
	l := x.links.m[id]
	delete(x.links.m, id)
	x.links.mu.Unlock()
	if l != nil {
		l.close(remove)
	}
}

// closeLinks stops listening on every link (the engine is closing; the
// folders stay for the sandboxes that outlive it).
func (x *Runtime) closeLinks() {
	x.links.mu.Lock()
	m := x.links.m
	x.links.m = nil
	x.links.mu.Unlock()
	for _, l := range m {
		if l != nil {
			l.close(false)
		}
	}
}

// logger is the gate's logger, or one that discards.
func (x *Runtime) logger() *slog.Logger {
	x.mu.RLock()
	log := x.log
	x.mu.RUnlock()
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}
