//go:build linux

package agent

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/sandtray/sandtray/agent/wire"
)

// drainGrace is how long the output of a process that has ended is still
// read: what it left running was killed (a marker's sweep), or holds its
// pipes (no marker) and is not waited for.
const drainGrace = 500 * time.Millisecond

// frameWriter writes whole frames to a stream from several goroutines.
type frameWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (f *frameWriter) frame(kind byte, p []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return wire.WriteFrame(f.w, kind, p)
}

// spawn starts req's process, answers with its pid, then carries its
// stdin (frames from the engine), its output (frames to it) and its
// signals, and ends the stream with its exit. When the process ends, what
// carries its marker, and its group, are killed. A stream the engine ends
// before the process does kills them too: nothing outlives its call.
func (s *server) spawn(st *wire.Stream, req wire.Request) {
	if len(req.Argv) == 0 {
		replyErr(st, wire.KindInvalid, errors.New("spawn: no program"))
		return
	}
	env := mergeEnv(s.env, req.Env)
	if req.Marker != "" {
		env = mergeEnv(env, []string{"SANDTRAY_EXEC=" + req.Marker})
	}
	var p pipes
	if err := p.open(req.Stdin); err != nil {
		replyErr(st, wire.KindInvalid, err)
		return
	}
	dir, notice := workdir(req.Dir)
	pid, since, done, err := reap().start(proc{argv: req.Argv, env: env, dir: dir, files: p.child})
	p.closeChild()
	if err != nil {
		p.closeOurs()
		replyErr(st, wire.KindInvalid, err)
		return
	}
	fw := &frameWriter{w: st}
	if err := wire.WriteJSON(st, wire.KindReply, wire.Reply{Pid: pid}); err != nil {
		sweep([]int{pid}, req.Marker, since)
		p.closeOurs()
		return
	}
	if notice != "" {
		_ = fw.frame(wire.KindStderr, []byte(notice))
	}
	var out sync.WaitGroup
	out.Add(2)
	go pump(&out, p.stdout, fw, wire.KindStdout)
	go pump(&out, p.stderr, fw, wire.KindStderr)
	gone := make(chan struct{}) // the engine ended the stream
	go func() {
		feed(st, p.stdin, pid)
		close(gone)
	}()
	var ws syscall.WaitStatus
	select {
	case ws = <-done:
	case <-gone:
		sweep([]int{pid}, req.Marker, since)
		ws = <-done
	}
	if req.Marker != "" {
		sweep([]int{pid}, req.Marker, since)
	}
	drained := make(chan struct{})
	go func() { out.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drainGrace):
		p.stdout.Close()
		p.stderr.Close()
		<-drained
	}
	code, sig := exitCode(ws)
	b, _ := json.Marshal(wire.Exit{Code: code, Signal: sig})
	_ = fw.frame(wire.KindExit, b)
	p.closeOurs()
}

// pump sends what r yields as frames of kind until it ends.
func pump(wg *sync.WaitGroup, r io.Reader, fw *frameWriter, kind byte) {
	defer wg.Done()
	buf := make([]byte, wire.Chunk)
	for {
		n, err := r.Read(buf)
		if n > 0 && fw.frame(kind, buf[:n]) != nil {
			_, _ = io.Copy(io.Discard, r) // the engine is gone: let the process write on
			return
		}
		if err != nil {
			return
		}
	}
}

// feed carries the engine's frames to the process until the stream ends:
// stdin bytes, its end, signals.
func feed(st io.Reader, stdin *os.File, pid int) {
	defer func() {
		if stdin != nil {
			stdin.Close()
		}
	}()
	buf := make([]byte, wire.Chunk+64)
	for {
		kind, payload, err := wire.ReadFrame(st, wire.Chunk, buf)
		if err != nil {
			return
		}
		switch kind {
		case wire.KindStdin:
			if stdin != nil {
				if _, err := stdin.Write(payload); err != nil {
					stdin.Close()
					stdin = nil
				}
			}
		case wire.KindEOF:
			if stdin != nil {
				stdin.Close()
				stdin = nil
			}
		case wire.KindSignal:
			var sg wire.Signal
			if json.Unmarshal(payload, &sg) == nil && sg.Signal > 0 && sg.Signal < 65 {
				target := pid
				if sg.Group {
					target = -pid
				}
				_ = syscall.Kill(target, syscall.Signal(sg.Signal))
			}
		}
	}
}

// pipes are a process's stdin, stdout and stderr: the child's ends and
// the agent's.
type pipes struct {
	child                 [3]*os.File
	stdin, stdout, stderr *os.File
}

func (p *pipes) open(stdin bool) error {
	var err error
	if stdin {
		if p.child[0], p.stdin, err = os.Pipe(); err != nil {
			return err
		}
	} else if p.child[0], err = os.Open(os.DevNull); err != nil {
		return err
	}
	if p.stdout, p.child[1], err = os.Pipe(); err != nil {
		p.closeChild()
		return err
	}
	if p.stderr, p.child[2], err = os.Pipe(); err != nil {
		p.closeChild()
		p.stdout.Close()
		return err
	}
	return nil
}

func (p *pipes) closeChild() {
	for _, f := range p.child {
		if f != nil {
			f.Close()
		}
	}
}

func (p *pipes) closeOurs() {
	for _, f := range []*os.File{p.stdin, p.stdout, p.stderr} {
		if f != nil {
			f.Close()
		}
	}
}
