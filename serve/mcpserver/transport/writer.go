package transport

import (
	"encoding/json"
	"io"
	"log/slog"

	"github.com/mark3labs/mcp-go/mcp"
)

// connWriter owns the write side of a connection: one goroutine writes
// replies and notifications, one message per line. Before each reply it
// flushes the notifications already queued, so a tool call's progress
// notifications always precede its result. It also writes the session's
// coalesced "sandboxes changed" notifications.
type connWriter struct {
	w       io.Writer
	session *connSession
	notes   <-chan mcp.JSONRPCNotification
	replies chan any
	quit    chan struct{}
	done    chan struct{}
	broken  func() // called once when a write fails: the peer is gone
	log     *slog.Logger
	failed  bool
}

func newConnWriter(w io.Writer, session *connSession, broken func(), log *slog.Logger) *connWriter {
	return &connWriter{
		w: w, session: session, notes: session.notifications, broken: broken, log: log,
		replies: make(chan any),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
	}
}

// send queues a reply; it blocks until the writer takes it.
func (cw *connWriter) send(msg any) {
	select {
	case cw.replies <- msg:
	case <-cw.done:
	}
}

// stop ends run after flushing queued notifications; call it once every
// sender has returned.
func (cw *connWriter) stop() {
	close(cw.quit)
	<-cw.done
}

func (cw *connWriter) run() {
	defer close(cw.done)
	for {
		select {
		case n := <-cw.notes:
			cw.write(n)
		case <-cw.session.changed:
			for _, n := range cw.session.changeNotifications() {
				cw.write(n)
			}
		case msg := <-cw.replies:
			cw.flushNotes()
			cw.write(msg)
		case <-cw.quit:
			cw.flushNotes()
			return
		}
	}
}

func (cw *connWriter) flushNotes() {
	for {
		select {
		case n := <-cw.notes:
			cw.write(n)
		default:
			return
		}
	}
}

func (cw *connWriter) write(msg any) {
	if cw.failed {
		return
	}
	body, err := json.Marshal(msg)
	if err != nil {
		cw.log.Error("encode MCP message", "err", err)
		return
	}
	if _, err := cw.w.Write(append(body, '\n')); err != nil {
		cw.failed = true
		cw.log.Debug("write MCP message; dropping the connection", "err", err)
		cw.broken()
	}
}
