package transport

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// MaxHTTPInFlight bounds the POSTs the HTTP endpoint runs at once, all
// clients together. Each client has MaxInFlight of them, as one socket
// connection does, so four clients flooding at once still leave room
// nowhere but in their own budgets, and one client's flood leaves the rest
// to the others.
const MaxHTTPInFlight = 4 * MaxInFlight

// retryAfterSeconds is what a 429 asks a client to wait: requests in
// flight are tool calls, most of which end within a second.
const retryAfterSeconds = 1

// httpBudget counts the POSTs in flight per client and in all, and refuses
// one over either bound. Its methods are safe for concurrent use.
type httpBudget struct {
	perClient, total int

	mu       sync.Mutex
	inFlight map[string]int // per budget key; guarded by mu
	sum      int            // guarded by mu
}

func newHTTPBudget(perClient, total int) *httpBudget {
	return &httpBudget{perClient: perClient, total: total, inFlight: make(map[string]int)}
}

// take counts one request against key. ok is false when key already has
// perClient in flight, or the endpoint total (all is then true).
func (b *httpBudget) take(key string) (ok, all bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.inFlight[key] >= b.perClient:
		return false, false
	case b.sum >= b.total:
		return false, true
	}
	b.inFlight[key]++
	b.sum++
	return true, false
}

// give returns what take counted.
func (b *httpBudget) give(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sum--
	if b.inFlight[key]--; b.inFlight[key] <= 0 {
		delete(b.inFlight, key)
	}
}

// budgetKey names the client a POST counts against. A request of the
// stateless protocol (2026-07-28, in its _meta or its Mcp-Protocol-Version
// header) has no MCP session, and mcp-go ignores any Mcp-Session-Id it
// sends: it counts against its client, named by clientInfo in its _meta,
// the identity its default sandbox is kept under (statelessSessions). Other
// requests count against their session: Mcp-Session-Id on /mcp, sessionId
// on /message; those without one (initialize) share the "" budget.
func budgetKey(r *http.Request, body []byte) string {
	var msg struct {
		Params struct {
			Meta *mcp.Meta `json:"_meta"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &msg) // a body that is no request: mcp-go answers it
	meta := msg.Params.Meta
	if mcp.IsModernProtocol(meta.ProtocolVersion()) || mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
		return "client\x00" + statelessClient(meta.ClientInfo())
	}
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		return "session\x00" + id
	}
	if id := r.URL.Query().Get("sessionId"); id != "" {
		return "sse\x00" + id
	}
	return ""
}

// statelessClient is the name a stateless client's requests are known by:
// its clientInfo as "name version", "" when it gives none.
func statelessClient(info *mcp.Implementation) string {
	if info == nil {
		return ""
	}
	return clientName(*info)
}

// tooManyInFlight answers a POST over its budget with 429 and Retry-After,
// saying whose budget it was.
func tooManyInFlight(w http.ResponseWriter, all bool) {
	msg := "too many requests in flight for this client (" + strconv.Itoa(MaxInFlight) + "); wait for some to finish"
	if all {
		msg = "the server has " + strconv.Itoa(MaxHTTPInFlight) + " requests in flight from all its HTTP clients; retry shortly"
	}
	w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds))
	writeJSONRPC(w, http.StatusTooManyRequests, errorReply(nil, mcp.INVALID_REQUEST, msg))
}
