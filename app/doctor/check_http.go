package doctor

import (
	"context"
	"errors"
	"io/fs"
	"net"

	"github.com/sandtray/sandtray/app/httptoken"
	"github.com/sandtray/sandtray/serve/mcpserver"
)

// checkHTTP says whether MCP over HTTP is on, at which URL, and whether its
// bearer token is usable. It is optional: off is fine; on with a token file
// others can read, or not holding a token, fails.
func checkHTTP(_ context.Context, e *Env) []Line {
	h := e.Config.HTTP
	if h.Listen == "" {
		return []Line{{Info, "http", "off (optional: set http.listen or run `sandtray serve --http 127.0.0.1:8765`)", ""}}
	}
	_, port, _ := net.SplitHostPort(h.Listen)
	url := h.Origin(port) + mcpserver.PathStreamable
	if port == "0" {
		url = h.Origin("PORT") + mcpserver.PathStreamable + " (a free port picked at start: the log names it)"
	}
	tokens := httptoken.Open(e.TokenPath)
	_, err := tokens.Current()
	if errors.Is(err, fs.ErrNotExist) {
		return []Line{{OK, "http", url + "; the bearer token is made when the engine starts (sandtray token prints it)", ""}}
	}
	if err != nil {
		return []Line{{Fail, "http", url + ": the token is not usable: " + err.Error(),
			"sandtray token --rotate (then give the new token to your HTTP clients)"}}
	}
	return []Line{{OK, "http", url + ", bearer token in " + tokens.Path() + " (sandtray token prints it)", ""}}
}
