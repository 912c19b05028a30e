package config

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/homedir"
)

// HTTP is the optional MCP-over-HTTP endpoint ([http] in config.toml).
// An empty Listen turns it off; `sandtray serve --http ADDR` overrides it.
type HTTP struct {
	Listen  string `toml:"listen"`   // host:port; port 0 picks a free one
	TLSCert string `toml:"tls_cert"` // PEM certificate file; with TLSKey, serves HTTPS
	TLSKey  string `toml:"tls_key"`  // PEM private key file
}

// TLS reports whether the endpoint serves HTTPS.
func (h HTTP) TLS() bool { return h.TLSCert != "" }

// Origin is the endpoint's scheme, host and port as a client reaches it:
// the configured host with port, the one bound (Listen's own when it is not
// 0). Every interface is reached at 127.0.0.1, and so is localhost over
// plain HTTP: a client's "localhost" may resolve to ::1 first, and while
// Sandtray is not running anyone may listen there and read the token the
// client sends. (Over HTTPS the name stays, as certificates name it, and a
// squatter cannot show one.)
func (h HTTP) Origin(port string) string {
	scheme := "http"
	if h.TLS() {
		scheme = "https"
	}
	host, _, _ := net.SplitHostPort(h.Listen)
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() || !h.TLS() && strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// Check validates the section, naming the key at fault. A non-loopback
// listen address without TLS is refused: the bearer token would cross the
// network in the clear to anyone on the path.
func (h HTTP) Check() error {
	if (h.TLSCert == "") != (h.TLSKey == "") {
		return fmt.Errorf("http.tls_cert and http.tls_key must be set together: %w", sandbox.ErrInvalid)
	}
	for key, p := range map[string]string{"http.tls_cert": h.TLSCert, "http.tls_key": h.TLSKey} {
		if p != "" && !filepath.IsAbs(homedir.Expand(p)) {
			return fmt.Errorf("%s %q must be an absolute path: %w", key, p, sandbox.ErrInvalid)
		}
	}
	if h.Listen == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(h.Listen)
	if err != nil {
		return fmt.Errorf("http.listen %q is not host:port (e.g. 127.0.0.1:8765, or port 0 for any free one): %w", h.Listen, sandbox.ErrInvalid)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("http.listen %q: port must be 0 to 65535: %w", h.Listen, sandbox.ErrInvalid)
	}
	if !sandbox.IsLoopbackHost(host) && !h.TLS() {
		return fmt.Errorf("http.listen %q is not a loopback address, so every machine that can reach it would see the bearer token in clear text; "+
			"bind 127.0.0.1 or localhost, or set http.tls_cert and http.tls_key to serve HTTPS: %w", h.Listen, sandbox.ErrInvalid)
	}
	return nil
}
