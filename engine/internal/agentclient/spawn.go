package agentclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/sandtray/sandtray/agent/wire"
)

// Process is a process to run through the agent.
type Process struct {
	Argv   []string
	Env    []string // after the container's own; a later one wins
	Dir    string   // "" for the agent's
	Marker string   // SANDTRAY_EXEC: when it ends, its group and what carries the marker are killed
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Started, when set, is called with the process's pid once it runs.
	Started func(pid int)
}

// Exit is how a process ended.
type Exit struct {
	Code   int // its exit code, or 128 + the signal that ended it
	Signal int
}

// Run runs p to its end: stdin is copied to it (then closed), its output to
// p's writers, a frame of at most wire.MaxReply at a time. When ctx ends
// first, the stream is closed, the agent kills the process's group and what
// carries its marker, and Run returns ctx's error without waiting for it.
func (s *Session) Run(ctx context.Context, p Process) (Exit, error) {
	req := wire.Request{Op: wire.OpSpawn, Argv: p.Argv, Env: p.Env, Dir: p.Dir, Stdin: p.Stdin != nil, Marker: p.Marker}
	st, release, err := s.open(ctx, req)
	if err != nil {
		return Exit{}, err
	}
	defer release()
	defer st.Close()
	var r wire.Reply
	if err := s.reply(ctx, st, wire.MaxReply, &r); err != nil {
		return Exit{}, err
	}
	if p.Started != nil {
		p.Started(r.Pid)
	}
	if p.Stdin != nil {
		go feedStdin(st, p.Stdin) // ends with the stream at the latest
	}
	exit, err := s.readOutput(ctx, st, p.Stdout, p.Stderr)
	if ctx.Err() != nil {
		// Cancelled, or past its deadline: whatever the agent said last
		// (the exit of the process it killed for it), the call was stopped.
		return Exit{}, ctx.Err()
	}
	return exit, err
}

// feedStdin sends r to the process in frames, then its end.
func feedStdin(w io.Writer, r io.Reader) {
	buf := make([]byte, wire.Chunk)
	for {
		n, err := r.Read(buf)
		if n > 0 && wire.WriteFrame(w, wire.KindStdin, buf[:n]) != nil {
			return
		}
		if err != nil {
			_ = wire.WriteFrame(w, wire.KindEOF, nil)
			return
		}
	}
}

// readOutput reads the process's frames until its exit.
func (s *Session) readOutput(ctx context.Context, st io.Reader, stdout, stderr io.Writer) (Exit, error) {
	buf := make([]byte, wire.MaxReply)
	for {
		kind, payload, err := wire.ReadFrame(st, wire.MaxReply, buf)
		if err != nil {
			return Exit{}, s.failed(ctx, fmt.Errorf("the process's output: %w", err))
		}
		switch kind {
		case wire.KindStdout:
			if stdout != nil {
				_, _ = stdout.Write(payload)
			}
		case wire.KindStderr:
			if stderr != nil {
				_, _ = stderr.Write(payload)
			}
		case wire.KindExit:
			var x wire.Exit
			if err := json.Unmarshal(payload, &x); err != nil {
				return Exit{}, s.failed(ctx, fmt.Errorf("%w: exit frame: %v", wire.ErrProtocol, err))
			}
			return Exit{Code: x.Code, Signal: x.Signal}, nil
		default:
			return Exit{}, s.failed(ctx, fmt.Errorf("%w: a %q frame from a process", wire.ErrProtocol, kind))
		}
	}
}

// Kill kills, with SIGSTOP then SIGKILL, the process groups given and
// every process that carries marker, and says how many it killed.
func (s *Session) Kill(ctx context.Context, groups []int, marker string) (int, error) {
	var r wire.Reply
	err := s.ask(ctx, wire.Request{Op: wire.OpKill, Groups: groups, Marker: marker}, wire.MaxReply, &r)
	return r.Killed, err
}

// Probe reads the sandbox's out-of-memory count (ok is false where it has
// none) and its number of processes.
func (s *Session) Probe(ctx context.Context) (oomKills int64, ok bool, procs int, err error) {
	var r wire.Reply
	if err := s.ask(ctx, wire.Request{Op: wire.OpProbe}, wire.MaxReply, &r); err != nil {
		return 0, false, 0, err
	}
	if r.OOMKills != nil {
		return *r.OOMKills, true, r.Pids, nil
	}
	return 0, false, r.Pids, nil
}
