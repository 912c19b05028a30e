package install

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// HTTPTarget is Sandtray's HTTP endpoint, for clients configured to reach it
// by URL instead of launching the shim (`sandtray install CLIENT --http`).
type HTTPTarget struct {
	URL   string // the Streamable HTTP URL, e.g. http://127.0.0.1:8765/mcp
	Token string // the bearer token (sandtray token)
}

// httpForms says how each client spells a URL entry; a client missing here
// takes only local commands in its config file.
var httpForms = map[string]struct{ typ string }{
	"claude-code": {typ: "http"},
	"vscode":      {typ: "http"},
	"cursor":      {},
}

// stdioKeys and httpKeys are the members only one form has: switching an
// entry from one form to the other drops the other's.
var (
	stdioKeys = []string{"command", "args"}
	httpKeys  = []string{"url", "headers"}
)

// httpEntry is Sandtray's URL-and-header entry for client c.
func (c client) httpEntry(t HTTPTarget) (object, error) {
	form, ok := httpForms[c.name]
	if !ok {
		return nil, fmt.Errorf("%s's config file takes only local commands, not URLs; "+
			"install the shim instead (sandtray install %s, without --http)", c.app, c.name)
	}
	if t.URL == "" || t.Token == "" {
		return nil, fmt.Errorf("an HTTP entry needs the endpoint's URL and token")
	}
	var e object
	if form.typ != "" {
		e = append(e, member{Key: "type", Value: mustJSON(form.typ)})
	}
	headers, _ := json.Marshal(map[string]string{"Authorization": "Bearer " + t.Token})
	return append(e,
		member{Key: "url", Value: mustJSON(loopbackIP(t.URL))},
		member{Key: "headers", Value: headers}), nil
}

// loopbackIP rewrites a plain-HTTP URL on localhost to 127.0.0.1, where
// Sandtray listens. A client may resolve localhost to ::1 first, and while
// Sandtray is not running anyone can listen there and collect the bearer
// token the client sends on every request. (HTTPS keeps its name: the
// certificate names it, and a squatter cannot show one.)
func loopbackIP(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || !strings.EqualFold(strings.TrimSuffix(u.Hostname(), "."), "localhost") {
		return raw
	}
	host := "127.0.0.1"
	if p := u.Port(); p != "" {
		host = net.JoinHostPort(host, p)
	}
	u.Host = host
	return u.String()
}

// without returns o minus the members named keys.
func (o object) without(keys ...string) object {
	out := o[:0:0]
	for _, m := range o {
		drop := false
		for _, k := range keys {
			drop = drop || m.Key == k
		}
		if !drop {
			out = append(out, m)
		}
	}
	return out
}
