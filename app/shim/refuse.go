package shim

import (
	"bufio"
	"context"
	"encoding/json"
	"strings"
)

// maxRequestLine bounds a request the shim reads to refuse it.
const maxRequestLine = 4 << 20

// unavailableCode is the JSON-RPC error code of the refusal: in the range
// JSON-RPC leaves to servers.
const unavailableCode = -32000

// refuseRequests answers each JSON-RPC request on the client's stdin with
// an error saying why no engine serves it (notifications get no answer),
// until stdin ends or ctx is done, so the client's initialize tells the
// model and the person what is wrong instead of the server just ending.
func refuseRequests(ctx context.Context, opts Options, why error) {
	msg := "Sandtray is not running and could not be started, so nothing can run: " + strings.TrimSuffix(why.Error(), ".") +
		". Ask the user to open the Sandtray app: its window says what is wrong and how to fix it."
	done := make(chan struct{})
	go func() { // a read of stdin that cannot be interrupted ends with the process
		defer close(done)
		sc := bufio.NewScanner(opts.Stdin)
		sc.Buffer(make([]byte, 0, 64<<10), maxRequestLine)
		enc := json.NewEncoder(opts.Stdout)
		for sc.Scan() {
			var req struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(sc.Bytes(), &req) != nil || len(req.ID) == 0 || string(req.ID) == "null" {
				continue
			}
			resp := map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": unavailableCode, "message": msg}}
			if enc.Encode(resp) != nil {
				return
			}
		}
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}
