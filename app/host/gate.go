package host

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"sync"
)

// gate is what the MCP socket serves: the engine's MCP server once it
// runs; until then (Docker unreachable, a config the engine refuses),
// every request on it is answered with a JSON-RPC error that says why, so
// an assistant's first call (initialize, through sandtray-mcp) tells the
// model what is wrong instead of failing without a word.
type gate struct {
	mu      sync.Mutex
	srv     connServer // nil until the engine runs
	why     string
	waiting map[io.Closer]struct{} // connections told why, ended when the engine comes
}

func newGate(why string) *gate { return &gate{why: why, waiting: map[io.Closer]struct{}{}} }

// setWhy changes what the requests are answered while the engine does not
// run.
func (g *gate) setWhy(why string) {
	g.mu.Lock()
	g.why = why
	g.mu.Unlock()
}

// open lets the engine's server have the socket: new connections go to it,
// and those told why are ended, so their clients (the shim, and the
// assistant through it) start again on the engine.
func (g *gate) open(srv connServer) {
	g.mu.Lock()
	g.srv = srv
	waiting := g.waiting
	g.waiting = nil
	g.mu.Unlock()
	for c := range waiting {
		c.Close()
	}
}

// ServeConn serves one connection of the socket.
func (g *gate) ServeConn(ctx context.Context, conn io.ReadWriteCloser) error {
	g.mu.Lock()
	srv := g.srv
	if srv == nil {
		g.waiting[conn] = struct{}{}
	}
	g.mu.Unlock()
	if srv != nil {
		return srv.ServeConn(ctx, conn)
	}
	defer func() {
		g.mu.Lock()
		delete(g.waiting, conn)
		g.mu.Unlock()
	}()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	defer conn.Close()
	return refuse(conn, conn, func() string {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.why
	})
}

// maxRequestLine bounds a request refuse reads.
const maxRequestLine = 4 << 20

// refuse answers each JSON-RPC request read from in (one per line) with an
// error whose message is why(), until in ends; notifications get no
// answer, as JSON-RPC has it.
func refuse(in io.Reader, out io.Writer, why func() string) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), maxRequestLine)
	enc := json.NewEncoder(out)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || len(req.ID) == 0 || string(req.ID) == "null" {
			continue
		}
		resp := map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": unavailableCode, "message": why()}}
		if err := enc.Encode(resp); err != nil {
			return err
		}
	}
	return sc.Err()
}

// unavailableCode is the JSON-RPC error code of a request Sandtray cannot
// serve yet: in the range JSON-RPC leaves to servers.
const unavailableCode = -32000
