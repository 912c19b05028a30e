package host

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/app/httptoken"
	"github.com/sandtray/sandtray/internal/loopback"
	"github.com/sandtray/sandtray/serve/mcpserver"
)

// httpEndpoint is the optional MCP-over-HTTP listener (`serve --http`,
// http.listen in config.toml), bound before the engine starts so that a
// refused or busy address stops Sandtray at once, with a sentence saying why.
type httpEndpoint struct {
	cfg    config.HTTP
	ln     net.Listener // TCP, of this user's processes only (loopback.OwnUser)
	tls    *tls.Config  // nil: plain HTTP
	tokens *httptoken.File
	url    string // the Streamable HTTP URL clients use
}

// listenHTTP binds cfg.Listen (TLS when configured) and makes sure a token
// exists. A non-loopback address without TLS is refused by cfg.Check. A
// loopback one is bound on both loopback families, so no other user can
// take the half a client's "localhost" may mean (and a port whose other half
// is taken stops Sandtray, saying so); connections from other users' sockets
// are refused where the system says whose a socket is (Linux).
func listenHTTP(cfg config.HTTP, tokenPath string, log *slog.Logger) (*httpEndpoint, error) {
	if err := cfg.Check(); err != nil {
		return nil, fmt.Errorf("MCP over HTTP: %w", err)
	}
	tokens := httptoken.Open(tokenPath)
	if _, err := tokens.Ensure(); err != nil {
		return nil, fmt.Errorf("MCP over HTTP: %w", err)
	}
	var tlsCfg *tls.Config
	if cfg.TLS() {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("MCP over HTTP: http.tls_cert and http.tls_key: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := loopback.Listen(context.Background(), cfg.Listen)
	if errors.Is(err, loopback.ErrOtherFamilyTaken) {
		return nil, fmt.Errorf("MCP over HTTP: %w; stop that program or choose another port (http.listen, or serve --http)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("MCP over HTTP: %w", err)
	}
	ln = loopback.OwnUser(ln, log, "MCP over HTTP")
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return &httpEndpoint{cfg: cfg, ln: ln, tls: tlsCfg, tokens: tokens, url: cfg.Origin(port) + mcpserver.PathStreamable}, nil
}

// serve serves srv until ctx is done; see HTTPServer.Serve.
func (e *httpEndpoint) serve(ctx context.Context, srv *mcpserver.Server, log *slog.Logger) error {
	h := srv.NewHTTP(mcpserver.HTTPOptions{Token: e.tokens.Current, Listen: e.cfg.Listen, TLS: e.tls})
	log.Info("serving MCP over HTTP", "url", e.url, "sse", e.url[:len(e.url)-len(mcpserver.PathStreamable)]+mcpserver.PathSSE,
		"token_file", e.tokens.Path())
	return h.Serve(ctx, e.ln)
}

// serveHTTP runs the core's HTTP endpoint, if it has one, next to the
// socket; stop cancels what runs beside it when the endpoint fails. The
// returned function waits for it and reports how it ended.
func (c *core) serveHTTP(ctx context.Context, stop context.CancelFunc) (wait func() error) {
	if c.http == nil {
		return func() error { return nil }
	}
	var wg sync.WaitGroup
	var err error
	wg.Go(func() {
		err = c.http.serve(ctx, c.srv, c.log)
		if errors.Is(err, context.Canceled) {
			err = nil
		}
		if err != nil {
			stop()
		}
	})
	return func() error {
		wg.Wait()
		return err
	}
}
