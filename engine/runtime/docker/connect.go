package docker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	goruntime "runtime"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Ping timeouts: an endpoint the user named gets time to answer (a remote
// daemon over ssh connects first); a well-known socket that exists but does
// not answer within probeTimeout is passed over for the next one.
const (
	pingTimeout  = 10 * time.Second
	probeTimeout = 3 * time.Second
	sshTimeout   = 30 * time.Second
)

// New connects to the daemon Connect finds with nothing pinned.
func New(ctx context.Context) (*Client, error) { return Connect(ctx, "") }

// Connect finds the Docker daemon and connects to it: the pinned endpoint
// (the config's docker.host) when set, else DOCKER_HOST, else the current
// docker context, else the known sockets of Docker Desktop, Colima,
// OrbStack, Rancher Desktop, Podman, rootless Docker and the system socket,
// the first that answers a ping (see candidates). DOCKER_API_VERSION,
// DOCKER_CERT_PATH and DOCKER_TLS_VERIFY apply as in the docker CLI, and
// ssh:// endpoints go through `ssh … docker system dial-stdio`.
//
// When no endpoint answers the error wraps sandbox.ErrUnavailable, names
// what was tried and says how to fix it; a daemon older than the API the
// SDK needs is sandbox.ErrUnsupported. Client.Endpoint says which endpoint
// was chosen and why.
func Connect(ctx context.Context, pinned string) (*Client, error) {
	return connect(ctx, hostEnv(goruntime.GOOS), pinned)
}

func connect(ctx context.Context, env discoveryEnv, pinned string) (*Client, error) {
	return connectFirst(ctx, candidates(env, pinned))
}

// connectFirst connects to the first endpoint of list that answers.
func connectFirst(ctx context.Context, list []Endpoint) (*Client, error) {
	var skipped []string
	var tried []runtime.Tried
	for _, ep := range list {
		if ep.socket != "" {
			if _, err := os.Stat(ep.socket); err != nil {
				continue // not installed here: not worth a line in the report
			}
		}
		api, err := ping(ctx, ep)
		if errors.Is(err, sandbox.ErrUnsupported) {
			return nil, err
		}
		if ep.explicit && err != nil {
			return nil, &runtime.NoEngineError{Tried: []runtime.Tried{{Host: ep.Host, Source: ep.Source, Cause: rootCause(err)}}, Pinned: ep.Source, Err: err}
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			skipped = append(skipped, fmt.Sprintf("%s (%s): %v", ep.Host, ep.Source, rootCause(err)))
			tried = append(tried, runtime.Tried{Host: ep.Host, Source: ep.Source, Cause: rootCause(err)})
			continue
		}
		if ep.Why == "" {
			ep.Why = "the first that answered a ping"
		}
		ep.Skipped = skipped
		return &Client{api: api, endpoint: ep}, nil
	}
	triedText := "no Docker socket was found"
	if len(skipped) > 0 {
		triedText = "tried " + strings.Join(skipped, "; ")
	}
	return nil, &runtime.NoEngineError{Tried: tried, Err: fmt.Errorf("cannot reach a Docker engine (%s): start Docker Desktop, Colima, OrbStack, "+
		"Rancher Desktop, Podman or the Docker service (sudo systemctl start docker), or set DOCKER_HOST "+
		"or docker.host in config.toml: %w", triedText, sandbox.ErrUnavailable)}
}

// ping connects to ep and pings it, negotiating the API version.
func ping(ctx context.Context, ep Endpoint) (*client.Client, error) {
	api, err := newAPI(ep.Host)
	if err != nil {
		return nil, fmt.Errorf("configure the Docker client for %s (%s): %w (%w)", ep.Host, ep.Source, sandbox.ErrInvalid, err)
	}
	timeout := probeTimeout
	switch {
	case strings.HasPrefix(ep.Host, "ssh://"):
		timeout = sshTimeout
	case ep.explicit:
		timeout = pingTimeout
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err = api.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true})
	if err == nil {
		return api, nil
	}
	_ = api.Close()
	if cerrdefs.IsInvalidArgument(err) {
		// The daemon answered, with an API version older than the SDK supports.
		return nil, fmt.Errorf("the Docker daemon at %s (%s) is too old; upgrade it: %w (%w)",
			ep.Host, ep.Source, sandbox.ErrUnsupported, err)
	}
	return nil, fmt.Errorf("cannot reach the Docker daemon at %s (%s): is the Docker daemon running? Start it, or point "+
		"DOCKER_HOST (or docker.host in config.toml) at one that is: %w (%w)", ep.Host, ep.Source, sandbox.ErrUnavailable, err)
}

// sshIdleConns is how many idle connections a client over ssh keeps: as
// many as the engine has short requests in flight at once in steady use,
// the disk watch's stats reads (run.statsInFlight). The SDK keeps 2, and
// over ssh each connection is an ssh process and a `docker system
// dial-stdio` on the daemon's machine: with 30 idle sandboxes read through
// stats, the watch started about 4 of them a second.
const sshIdleConns = 16

// newAPI makes an SDK client for host; ssh:// hosts get a dialer that runs
// ssh (see sshDialer) and a larger idle pool (sshIdleConns), every other
// scheme is the SDK's own.
func newAPI(host string) (*client.Client, error) {
	opts := []client.Opt{client.WithTLSClientConfigFromEnv(), client.WithAPIVersionFromEnv()}
	if strings.HasPrefix(host, "ssh://") {
		d, err := newSSHDialer(host)
		if err != nil {
			return nil, err
		}
		// First, as the options after it change its transport. Idle ones
		// end after 30 s, as the SDK's do. The dialer is set from the
		// start: a transport without one gets a TLS config when the option
		// clones it, and the SDK then dials its hijacked connections (attach,
		// exec) without the dialer, so they fail (TestSSHKeepsItsConnections).
		hc := &http.Client{CheckRedirect: client.CheckRedirect, Transport: &http.Transport{DialContext: d.DialContext,
			MaxIdleConns: sshIdleConns, MaxIdleConnsPerHost: sshIdleConns, IdleConnTimeout: 30 * time.Second}}
		// The URL's host is a placeholder: every connection is a new ssh.
		opts = append([]client.Opt{client.WithHTTPClient(hc)}, append(opts,
			client.WithHost("http://docker.example.com"), client.WithDialContext(d.DialContext))...)
	} else {
		opts = append(opts, client.WithHost(host))
	}
	return client.New(opts...)
}

// rootCause is the innermost error's text, short enough for a list of tried
// endpoints.
func rootCause(err error) string {
	for {
		var next error
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			if errs := u.Unwrap(); len(errs) > 0 {
				next = errs[len(errs)-1]
			}
		case interface{ Unwrap() error }:
			next = u.Unwrap()
		}
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

// Endpoint is the daemon this client talks to and why it was chosen.
func (c *Client) Endpoint() runtime.Endpoint {
	return c.endpoint.public()
}

// The Docker runtime serves Docker and every engine that speaks its API
// (Podman, Colima, OrbStack, …).
var _ runtime.Full = (*Client)(nil)

// Name is the name the Docker runtime registers under: "docker".
func (c *Client) Name() string { return "docker" }

func init() {
	runtime.Register("docker", func(ctx context.Context, host string) (runtime.Runtime, error) {
		c, err := Connect(ctx, host)
		if err != nil {
			return nil, err // not a nil *Client in a non-nil Runtime
		}
		return c, nil
	})
}
