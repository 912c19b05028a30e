package docker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Client talks to one Docker daemon. It is safe for concurrent use.
type Client struct {
	api      *client.Client
	endpoint Endpoint
	users    userCache    // see UserIDs
	tmpfs    tmpfsCache   // see onTmpfs
	agents   agentVolumes // see ensureAgent
	// pullLimit bounds the bytes one pull may download (0: no bound);
	// see SetPullLimit.
	pullLimit atomic.Int64
	podman    atomic.Int32 // 1: the daemon is Podman, -1: it is not, 0: not asked yet; see isPodman
}

// Close releases the client's idle connections.
func (c *Client) Close() error {
	return c.api.Close()
}

// ServerVersion describes the daemon, e.g. "20.10.24 (API 1.41)".
func (c *Client) ServerVersion(ctx context.Context) (string, error) {
	v, err := c.api.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return "", wrap("get Docker version", err)
	}
	return fmt.Sprintf("%s (API %s)", v.Version, v.APIVersion), nil
}

// Runtimes lists the OCI runtimes the daemon knows, sorted, so the engine can
// tell whether gVisor ("runsc") is available.
func (c *Client) Runtimes(ctx context.Context) ([]string, error) {
	info, err := c.api.Info(ctx, client.InfoOptions{})
	if err != nil {
		return nil, wrap("get Docker info", err)
	}
	names := make([]string, 0, len(info.Info.Runtimes))
	for name := range info.Info.Runtimes {
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

// contextEndpoint returns the Docker endpoint of the docker context name in
// the CLI's config dir, or "" when it cannot be read. Only the host is
// taken; a context's TLS material is not supported.
func contextEndpoint(dir, name string) string {
	if dir == "" || name == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(name))
	var meta struct {
		Endpoints map[string]struct {
			Host string `json:"Host"`
		} `json:"Endpoints"`
	}
	if !readJSON(filepath.Join(dir, "contexts", "meta", hex.EncodeToString(sum[:]), "meta.json"), &meta) {
		return ""
	}
	return meta.Endpoints["docker"].Host
}

// dockerConfigDir is $DOCKER_CONFIG or ~/.docker.
func dockerConfigDir() string {
	if dir := os.Getenv("DOCKER_CONFIG"); dir != "" {
		return dir
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".docker")
}

// readJSON decodes a small JSON file into v, reporting whether it could.
func readJSON(path string, v any) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	return json.Unmarshal(b, v) == nil
}

// wrap describes a failed SDK call as "op: kind (original)", where kind is the
// sandbox error kind the failure belongs to. Both the kind and the original
// error stay in the chain, so callers can errors.Is against a kind (or
// context.DeadlineExceeded) and logs still show what Docker said. This is the
// one place SDK errors are classified.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	kind := kindOf(err)
	if kind == nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return fmt.Errorf("%s: %w (%w)", op, kind, err)
}

// kindOf maps an SDK error to a sandbox error kind, or nil for failures that
// are neither the caller's fault nor a sign of an unreachable daemon (an
// internal daemon error, for instance).
func kindOf(err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		// The caller gave up; that says nothing about Docker.
		return nil
	case errors.Is(err, context.DeadlineExceeded),
		client.IsErrConnectionFailed(err),
		cerrdefs.IsUnavailable(err),
		isNetError(err):
		return sandbox.ErrUnavailable
	case cerrdefs.IsNotFound(err):
		return sandbox.ErrNotFound
	case cerrdefs.IsConflict(err), cerrdefs.IsAlreadyExists(err), cerrdefs.IsFailedPrecondition(err):
		return sandbox.ErrConflict
	case cerrdefs.IsInvalidArgument(err):
		return sandbox.ErrInvalid
	case cerrdefs.IsPermissionDenied(err), cerrdefs.IsUnauthorized(err):
		return sandbox.ErrForbidden
	case podmanConflict(err):
		return sandbox.ErrConflict
	}
	return nil
}

// podmanConflicts are the ends of Podman's conflicts, which its
// Docker-compatible API (4.x) answers with a 500 where Docker says 409: an
// exec in or a kill of a container that is not running ("… container
// state improper"), a name another container has ("… that name is already
// in use").
var podmanConflicts = []string{"container state improper", "that name is already in use"}

func podmanConflict(err error) bool {
	if !cerrdefs.IsInternal(err) && !cerrdefs.IsUnknown(err) {
		return false
	}
	msg := err.Error()
	return slices.ContainsFunc(podmanConflicts, func(s string) bool { return strings.HasSuffix(msg, s) })
}

// isNetError reports a transport failure the SDK did not decorate itself,
// such as a failed dial for a hijacked exec connection or a stream reset.
func isNetError(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr)
}
