package agentclient

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/sandtray/sandtray/agent/wire"
)

// maxList bounds a listing's reply: wire.MaxReply is too small for the
// thousands of entries a tree may have.
const maxList = 8 << 20

// Stat describes path without following it.
func (s *Session) Stat(ctx context.Context, path string) (wire.Stat, error) {
	var r wire.Reply
	if err := s.ask(ctx, wire.Request{Op: wire.OpStat, Path: path}, wire.MaxReply, &r); err != nil {
		return wire.Stat{}, err
	}
	if r.Stat == nil {
		return wire.Stat{}, fmt.Errorf("%w: a stat without its answer", wire.ErrProtocol)
	}
	return *r.Stat, nil
}

// Read reads at most limit bytes of the file path from offset (following
// symlinks inside the sandbox), and the file's stat. Whatever the agent
// sends, no more than limit bytes are read.
func (s *Session) Read(ctx context.Context, path string, offset, limit int64) ([]byte, wire.Stat, error) {
	st, release, err := s.open(ctx, wire.Request{Op: wire.OpRead, Path: path, Offset: offset, Limit: limit})
	if err != nil {
		return nil, wire.Stat{}, err
	}
	defer release()
	defer st.Close()
	var r wire.Reply
	if err := s.reply(ctx, idle{st}, wire.MaxReply, &r); err != nil {
		return nil, wire.Stat{}, err
	}
	if r.Stat == nil || r.Size < 0 || r.Size > limit {
		return nil, wire.Stat{}, s.failed(ctx, fmt.Errorf("%w: a read of %d bytes, %d asked for", wire.ErrProtocol, r.Size, limit))
	}
	data := make([]byte, r.Size)
	n, err := io.ReadFull(idle{st}, data)
	if err != nil && ctx.Err() != nil {
		return nil, wire.Stat{}, ctx.Err()
	}
	return data[:n], *r.Stat, nil // a file that shrank meanwhile gives what it had
}

// Write is a file to write.
type Write struct {
	Path     string
	Data     io.Reader
	Size     int64  // exactly this many bytes of Data are sent
	Mode     uint32 // permission bits; 0 for 0644
	Parents  bool   // create missing parent folders
	UID, GID int    // owner, applied when the agent runs as root (0, 0: its own)
}

// Write writes a file, whole or not at all: the agent writes it beside
// the target and renames it over it once complete.
func (s *Session) Write(ctx context.Context, w Write) error {
	st, release, err := s.open(ctx, wire.Request{Op: wire.OpWrite, Path: w.Path, Size: w.Size, Mode: w.Mode,
		Parent: w.Parents, UID: w.UID, GID: w.GID})
	if err != nil {
		return err
	}
	defer release()
	defer st.Close()
	sent := make(chan error, 1)
	go func() {
		_, err := io.CopyN(idle{st}, w.Data, w.Size)
		if err != nil {
			st.Close() // the agent reads the end early, and writes nothing
		}
		sent <- err
	}()
	var r wire.Reply
	err = s.reply(ctx, idle{st}, wire.MaxReply, &r)
	select {
	case serr := <-sent:
		if serr != nil {
			return fmt.Errorf("write %s: %w", w.Path, serr)
		}
	default: // the agent answered before it had all: its error says why
	}
	return err
}

// Mkdir makes a folder and its parents.
func (s *Session) Mkdir(ctx context.Context, path string) error {
	return s.ask(ctx, wire.Request{Op: wire.OpMkdir, Path: path}, wire.MaxReply, &wire.Reply{})
}

// Remove removes path and what is under it.
func (s *Session) Remove(ctx context.Context, path string) error {
	return s.ask(ctx, wire.Request{Op: wire.OpRemove, Path: path}, wire.MaxReply, &wire.Reply{})
}

// List lists the folder path to depth levels, at most max entries; more
// says there were more.
func (s *Session) List(ctx context.Context, path string, depth int, all bool, max int) (entries []wire.Entry, more bool, err error) {
	var r wire.Reply
	if err := s.ask(ctx, wire.Request{Op: wire.OpList, Path: path, Depth: depth, All: all, Max: max}, maxList, &r); err != nil {
		return nil, false, err
	}
	if len(r.Entries) > max {
		r.Entries, r.Truncated = r.Entries[:max], true
	}
	return r.Entries, r.Truncated, nil
}

// TarOut streams a tar of path (its top entry is path's own name); the
// caller bounds what it reads, and closes it.
func (s *Session) TarOut(ctx context.Context, path string) (io.ReadCloser, error) {
	st, release, err := s.open(ctx, wire.Request{Op: wire.OpTarOut, Path: path})
	if err != nil {
		return nil, err
	}
	var r wire.Reply
	if err := s.reply(ctx, idle{st}, wire.MaxReply, &r); err != nil {
		release()
		st.Close()
		return nil, err
	}
	return readCloser{idle{st}, func() { release(); _ = st.SetDeadline(time.Now()); st.Close() }}, nil
}

// TarIn extracts the tar r into the folder dir; as root, entries get
// uid:gid when given (not 0, 0).
func (s *Session) TarIn(ctx context.Context, dir string, r io.Reader, uid, gid int) error {
	st, release, err := s.open(ctx, wire.Request{Op: wire.OpTarIn, Path: dir, UID: uid, GID: gid})
	if err != nil {
		return err
	}
	defer release()
	defer st.Close()
	sent := make(chan error, 1)
	go func() {
		_, err := io.Copy(idle{st}, r)
		if err == nil {
			err = st.Close() // half-close: the agent reads the end of the tar
		}
		sent <- err
	}()
	var rep wire.Reply
	if err := s.reply(ctx, idle{st}, wire.MaxReply, &rep); err != nil {
		return err
	}
	return <-sent
}

type readCloser struct {
	io.Reader
	close func()
}

func (r readCloser) Close() error { r.close(); return nil }
