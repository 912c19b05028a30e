//go:build linux

package agent

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"syscall"

	"github.com/sandtray/sandtray/agent/wire"
)

// server serves one session: each stream the engine opens is one request.
type server struct {
	sess  *wire.Session
	env   []string      // the agent's own environment: the container's
	conns chan struct{} // one token per stream the agent has open towards the engine
}

// stdio is the agent's stdin and stdout as one connection.
type stdio struct {
	io.ReadCloser
	io.Writer
}

func (s stdio) Close() error {
	err := s.ReadCloser.Close()
	if c, ok := s.Writer.(io.Closer); ok {
		err = errors.Join(err, c.Close())
	}
	return err
}

// serveStdio serves the session on stdin and stdout until it ends (the
// engine closed it, or it broke).
func serveStdio(stdin io.ReadCloser, stdout io.Writer) int {
	if err := serve(stdio{stdin, stdout}); err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintln(os.Stderr, "sandtray-agent:", err)
		return 1
	}
	return 0
}

// serve runs the session over conn until it ends.
func serve(conn io.ReadWriteCloser) error {
	reap()
	sess, err := wire.Server(conn)
	if err != nil {
		return err
	}
	defer sess.Close()
	s := &server{sess: sess, env: os.Environ(), conns: make(chan struct{}, wire.MaxStreams)}
	for {
		st, err := sess.AcceptStream()
		if err != nil {
			if sess.IsClosed() {
				return nil
			}
			return err
		}
		go s.handle(st)
	}
}

// runInit is PID 1: it reaps every orphan, serves a session on its stdin
// and stdout when the engine attached them (until the engine goes, after
// which it only reaps) and on the sandbox's link when it has one (see
// link), and ends on SIGTERM, SIGINT, SIGHUP or SIGQUIT, as docker-init
// does.
func runInit(stdin io.ReadCloser, stdout io.Writer) int {
	reap()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	go func() { _ = serve(stdio{stdin, stdout}) }()
	go link(wire.LinkSocket)
	s := (<-sig).(syscall.Signal)
	return 128 + int(s)
}

// handle answers one stream's request.
func (s *server) handle(st *wire.Stream) {
	defer st.Close()
	var req wire.Request
	if err := wire.ReadJSON(st, wire.KindRequest, wire.MaxRequest, &req); err != nil {
		return
	}
	switch req.Op {
	case wire.OpHello:
		_ = wire.WriteJSON(st, wire.KindReply, wire.Reply{Version: wire.Version, Pid: os.Getpid(), UID: os.Getuid(), GID: os.Getgid()})
	case wire.OpSpawn:
		s.spawn(st, req)
	case wire.OpKill:
		_ = wire.WriteJSON(st, wire.KindReply, wire.Reply{Killed: sweep(req.Groups, req.Marker, 0)})
	case wire.OpStat, wire.OpRead, wire.OpWrite, wire.OpMkdir, wire.OpRemove, wire.OpList, wire.OpTarOut, wire.OpTarIn:
		s.files(st, req)
	case wire.OpDial:
		s.dial(st, req)
	case wire.OpListen:
		s.listen(st, req)
	case wire.OpProbe:
		_ = wire.WriteJSON(st, wire.KindReply, probe())
	default:
		replyErr(st, wire.KindInvalid, fmt.Errorf("unknown operation %q", req.Op))
	}
}

// replyErr answers with err, of kind (or the kind err itself says).
func replyErr(w io.Writer, kind string, err error) {
	_ = wire.WriteJSON(w, wire.KindReply, wire.Reply{Err: err.Error(), Kind: errKind(err, kind)})
}

// errKind is the wire's kind of err, or def.
func errKind(err error, def string) string {
	switch {
	case errors.Is(err, errNoProgram):
		return wire.KindNoProgram
	case errors.Is(err, fs.ErrNotExist):
		return wire.KindNotFound
	case errors.Is(err, fs.ErrExist):
		return wire.KindExists
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		return wire.KindPermission
	case errors.Is(err, syscall.ENOTDIR):
		return wire.KindNotDir
	case errors.Is(err, syscall.EISDIR):
		return wire.KindIsDir
	}
	return def
}
