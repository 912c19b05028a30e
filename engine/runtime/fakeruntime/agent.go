package fakeruntime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sandtray/sandtray/agent/wire"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Every container of the fake has the agent at runtime.AgentPath: an exec
// of `sandtray-agent serve` serves agent/wire on the exec's stdin and
// stdout, over the container's files and simulated processes (a spawn is a
// Proc the test's Handler runs, as an Exec's is); its other subcommands (the
// engine runs them with plain execs) answer as the real agent would. It
// cannot carry connections: dial and listen fail as unsupported.

// fakePids numbers the processes the fake agent starts.
var fakePids atomic.Int64

func init() { fakePids.Store(100) }

// agentCmd runs the agent's subcommand p.Raw[1:]; ok is false when p is not
// the agent.
func (p *Proc) agentCmd() (code int, ok bool) {
	if len(p.Raw) < 2 || p.Raw[0] != runtime.AgentPath {
		return 0, false
	}
	args := p.Raw[2:]
	switch p.Raw[1] {
	case "serve":
		p.serveAgent()
		return 0, true
	case "run":
		marker, dir, rest := runFlags(args)
		if marker != "" {
			p.Env = append(p.Env, "SANDTRAY_EXEC="+marker)
		}
		if dir != "" {
			p.Workdir = dir
		}
		p.Cmd = rest
		return -1, false // the command runs as any other
	case "kill":
		marker, _, _ := runFlags(append(slices.Clone(args), "--"))
		fmt.Fprintf(p.Stdout, "killed %d\n", p.killMarked(marker, nil))
	case "oom":
		p.r.d.mu.Lock()
		n := p.c.oomKills
		p.r.d.mu.Unlock()
		fmt.Fprintf(p.Stdout, "oom_kill %d\n", n)
	case "freeze":
		fmt.Fprintf(p.Stdout, "pass 0 0 0\n")
	case "thaw":
		fmt.Fprintf(p.Stdout, "resumed 0\n")
	case "killwriters":
		fmt.Fprintf(p.Stdout, "killed 0\n")
	case "which", "versions", "dpkgreport":
	default:
		fmt.Fprintf(p.Stderr, "sandtray-agent: unknown command %q\n", p.Raw[1])
		return 2, true
	}
	return 0, true
}

// runFlags reads `run`'s --marker= and --dir= and what follows "--".
func runFlags(args []string) (marker, dir string, rest []string) {
	for i, a := range args {
		switch {
		case a == "--":
			return marker, dir, args[i+1:]
		case strings.HasPrefix(a, "--marker="):
			marker = strings.TrimPrefix(a, "--marker=")
		case strings.HasPrefix(a, "--dir="):
			dir = strings.TrimPrefix(a, "--dir=")
		}
	}
	return marker, dir, nil
}

// killMarked kills the container's processes (but p) that carry marker, or
// whose pid is in groups, and says how many.
func (p *Proc) killMarked(marker string, groups []int) int {
	p.r.d.mu.Lock()
	defer p.r.d.mu.Unlock()
	n := 0
	for q := range p.c.procs {
		if q == p {
			continue
		}
		if (marker != "" && q.Getenv("SANDTRAY_EXEC") == marker) || (q.pid != 0 && slices.Contains(groups, q.pid)) {
			q.kill()
			n++
		}
	}
	return n
}

// rwc is an exec's stdin and stdout as one connection; Close ends its
// reads (the session's end waits for its reader).
type rwc struct {
	io.Reader
	io.Writer
}

func (c rwc) Close() error {
	if r, ok := c.Reader.(*io.PipeReader); ok {
		r.CloseWithError(io.EOF)
	}
	return nil
}

// serveAgent serves a session until the engine ends it or the process is
// killed (its container stopped).
func (p *Proc) serveAgent() {
	sess, err := wire.Server(rwc{p.Stdin, p.Stdout})
	if err != nil {
		return
	}
	stop := context.AfterFunc(p.ctx, func() { sess.Close() })
	defer stop()
	defer sess.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		st, err := sess.AcceptStream()
		if err != nil {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer st.Close()
			p.agentStream(st)
		}()
	}
}

func (p *Proc) agentStream(st *wire.Stream) {
	var req wire.Request
	if err := wire.ReadJSON(st, wire.KindRequest, wire.MaxRequest, &req); err != nil {
		return
	}
	reply := func(r wire.Reply) { _ = wire.WriteJSON(st, wire.KindReply, r) }
	fail := func(kind string, err error) { reply(wire.Reply{Err: err.Error(), Kind: kind}) }
	d := p.r.d
	switch req.Op {
	case wire.OpHello:
		uid := 0
		if u, _, _ := strings.Cut(p.c.opts.User, ":"); u != "" {
			uid, _ = strconv.Atoi(u)
		}
		reply(wire.Reply{Version: wire.Version, Pid: 1, UID: uid})
	case wire.OpSpawn:
		p.agentSpawn(st, req)
	case wire.OpKill:
		reply(wire.Reply{Killed: p.killMarked(req.Marker, req.Groups)})
	case wire.OpProbe:
		d.mu.Lock()
		n := p.c.oomKills
		procs := len(p.c.procs)
		d.mu.Unlock()
		reply(wire.Reply{OOMKills: &n, Pids: procs})
	case wire.OpStat:
		d.mu.Lock()
		n, ok := p.c.files[clean(req.Path)]
		var s wire.Stat
		if ok {
			s = wire.Stat{Name: path.Base(req.Path), Size: int64(len(n.data)), Mode: uint32(n.mode), ModTime: n.mtime.Unix(), Link: n.link}
		}
		d.mu.Unlock()
		if !ok {
			fail(wire.KindNotFound, fmt.Errorf("%s: no such file or folder", req.Path))
			return
		}
		reply(wire.Reply{Stat: &s})
	case wire.OpRead:
		d.mu.Lock()
		n, ok := p.c.files[clean(req.Path)]
		var data []byte
		var s wire.Stat
		if ok {
			s = wire.Stat{Name: path.Base(req.Path), Size: int64(len(n.data)), Mode: uint32(n.mode), ModTime: n.mtime.Unix()}
			data = bytes.Clone(n.data[min(req.Offset, int64(len(n.data))):min(req.Offset+req.Limit, int64(len(n.data)))])
		}
		d.mu.Unlock()
		switch {
		case !ok:
			fail(wire.KindNotFound, fmt.Errorf("%s: no such file", req.Path))
		case fs.FileMode(s.Mode).IsDir():
			fail(wire.KindIsDir, fmt.Errorf("%s is a folder", req.Path))
		default:
			reply(wire.Reply{Stat: &s, Size: int64(len(data))})
			_, _ = st.Write(data)
		}
	case wire.OpWrite:
		data, err := io.ReadAll(io.LimitReader(st, req.Size))
		if err == nil && int64(len(data)) != req.Size {
			err = io.ErrUnexpectedEOF
		}
		if err == nil {
			d.mu.Lock()
			if n, ok := p.c.files[clean(path.Dir(req.Path))]; !req.Parent && (!ok || !n.mode.IsDir()) {
				err = fmt.Errorf("folder %s: %w", path.Dir(req.Path), sandbox.ErrNotFound)
			} else {
				err = p.c.files.writeFile(req.Path, data, fs.FileMode(cmpOr0(req.Mode, 0o644)), true)
			}
			d.mu.Unlock()
		}
		agentDone(st, err)
	case wire.OpMkdir:
		d.mu.Lock()
		err := p.c.files.mkdirAll(req.Path, 0o755, 0, 0, true)
		d.mu.Unlock()
		agentDone(st, err)
	case wire.OpRemove:
		d.mu.Lock()
		p.c.files.remove(req.Path)
		d.mu.Unlock()
		reply(wire.Reply{})
	case wire.OpList:
		entries, err := p.agentList(req)
		if err != nil {
			agentDone(st, err)
			return
		}
		reply(wire.Reply{Entries: entries})
	case wire.OpTarOut:
		d.mu.Lock()
		b, _, err := p.c.files.archive(req.Path)
		d.mu.Unlock()
		if err != nil {
			agentDone(st, err)
			return
		}
		reply(wire.Reply{})
		_, _ = st.Write(b)
	case wire.OpTarIn:
		b, err := io.ReadAll(st) // the engine half-closes at the end of the tar
		if err == nil {
			d.mu.Lock()
			err = p.c.files.extract(req.Path, bytes.NewReader(b))
			d.mu.Unlock()
		}
		agentDone(st, err)
	default:
		fail(wire.KindUnsupported, fmt.Errorf("the fake runtime's agent cannot %s", req.Op))
	}
}

func cmpOr0(v, def uint32) uint32 {
	if v == 0 {
		return def
	}
	return v
}

// agentDone answers with err, of the wire's kind for it.
func agentDone(st io.Writer, err error) {
	r := wire.Reply{}
	if err != nil {
		r.Err, r.Kind = err.Error(), wire.KindInvalid
		switch {
		case errors.Is(err, sandbox.ErrNotFound):
			r.Kind = wire.KindNotFound
		case errors.Is(err, sandbox.ErrConflict):
			r.Kind = wire.KindNotDir
		}
	}
	_ = wire.WriteJSON(st, wire.KindReply, r)
}

// agentList lists a folder as the agent does.
func (p *Proc) agentList(req wire.Request) ([]wire.Entry, error) {
	dir := clean(req.Path)
	p.r.d.mu.Lock()
	defer p.r.d.mu.Unlock()
	n, ok := p.c.files[dir]
	if !ok || !n.mode.IsDir() {
		return nil, fmt.Errorf("no folder %s: %w", dir, sandbox.ErrNotFound)
	}
	var out []wire.Entry
	for _, q := range p.c.files.under(dir) {
		rel := strings.TrimPrefix(q, strings.TrimSuffix(dir, "/")+"/")
		parts := strings.Split(rel, "/")
		if len(parts) > max(req.Depth, 1) || !req.All && slices.ContainsFunc(parts, func(s string) bool { return strings.HasPrefix(s, ".") }) {
			continue
		}
		f := p.c.files[q]
		kind := "file"
		switch {
		case f.mode.IsDir():
			kind = "dir"
		case f.mode&fs.ModeSymlink != 0:
			kind = "symlink"
		}
		out = append(out, wire.Entry{Path: rel, Type: kind, Size: int64(len(f.data)), Mode: uint32(f.mode.Perm()), ModTime: f.mtime.UnixNano(), Link: f.link})
	}
	return out, nil
}

// agentSpawn runs a spawned process: a Proc of the container, run by the
// test's Handler, its stdin, output and exit carried in frames.
func (p *Proc) agentSpawn(st *wire.Stream, req wire.Request) {
	env := slices.Clone(req.Env)
	if req.Marker != "" {
		env = append(env, "SANDTRAY_EXEC="+req.Marker)
	}
	q, h, err := p.r.start(context.Background(), "Exec", "spawn in container "+p.c.id, p.c.id, req.Argv, env, p.User, req.Dir)
	if errors.Is(err, sandbox.ErrUnavailable) {
		p.kill() // the daemon went away: so does the session, as a real exec's stream
		return
	}
	if err != nil {
		agentDone(st, err)
		return
	}
	p.r.d.mu.Lock() // killMarked reads it under the lock
	q.pid = int(fakePids.Add(1))
	p.r.d.mu.Unlock()
	var mu sync.Mutex
	frame := func(kind byte, b []byte) {
		mu.Lock()
		defer mu.Unlock()
		_ = wire.WriteFrame(st, kind, b)
	}
	q.Stdout = writerFunc(func(b []byte) (int, error) { frame(wire.KindStdout, b); return len(b), nil })
	q.Stderr = writerFunc(func(b []byte) (int, error) { frame(wire.KindStderr, b); return len(b), nil })
	stdinR, stdinW := io.Pipe()
	if req.Stdin {
		q.Stdin = stdinR
	}
	if err := wire.WriteJSON(st, wire.KindReply, wire.Reply{Pid: q.pid}); err != nil {
		q.kill()
	}
	go func() { // the engine's frames; its end abandons the process
		defer stdinW.Close()
		for {
			kind, payload, err := wire.ReadFrame(st, wire.Chunk, nil)
			if err != nil {
				q.kill()
				p.killMarked(req.Marker, nil)
				return
			}
			switch kind {
			case wire.KindStdin:
				_, _ = stdinW.Write(payload)
			case wire.KindEOF:
				stdinW.Close()
			}
		}
	}()
	code, _ := p.r.run(q, h)
	p.killMarked(req.Marker, nil) // what it left running
	b, _ := json.Marshal(wire.Exit{Code: code})
	frame(wire.KindExit, b)
}
