package docker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestWrapClassifiesOnce(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want error // nil: no kind
	}{
		{"not found", cerrdefs.ErrNotFound.WithMessage("No such container: x"), sandbox.ErrNotFound},
		{"conflict", cerrdefs.ErrConflict.WithMessage("name in use"), sandbox.ErrConflict},
		{"already exists", cerrdefs.ErrAlreadyExists, sandbox.ErrConflict},
		{"invalid", cerrdefs.ErrInvalidArgument.WithMessage("bad runtime"), sandbox.ErrInvalid},
		{"unavailable", cerrdefs.ErrUnavailable, sandbox.ErrUnavailable},
		{"forbidden", cerrdefs.ErrPermissionDenied, sandbox.ErrForbidden},
		{"deadline", fmt.Errorf("get: %w", context.DeadlineExceeded), sandbox.ErrUnavailable},
		{"cancelled", fmt.Errorf("get: %w", context.Canceled), nil},
		{"internal", cerrdefs.ErrInternal.WithMessage("boom"), nil},
	}
	kinds := []error{sandbox.ErrNotFound, sandbox.ErrConflict, sandbox.ErrInvalid, sandbox.ErrUnavailable, sandbox.ErrForbidden}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := wrap("inspect container abc", tc.err)
			for _, k := range kinds {
				if errors.Is(got, k) != (k == tc.want) {
					t.Errorf("errors.Is(%q, %v) = %v, want %v", got, k, !(k == tc.want), k == tc.want)
				}
			}
			if !errors.Is(got, tc.err) {
				t.Errorf("%q lost the original error from its chain", got)
			}
			if !strings.HasPrefix(got.Error(), "inspect container abc: ") || !strings.Contains(got.Error(), tc.err.Error()) {
				t.Errorf("%q should start with the operation and keep Docker's message %q", got, tc.err)
			}
		})
	}
	if wrap("op", nil) != nil {
		t.Error("wrap of nil is not nil")
	}
}

func TestNewWithoutDaemonIsUnavailable(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	for _, host := range []string{
		"unix://" + filepath.Join(t.TempDir(), "missing.sock"),
		"tcp://127.0.0.1:1",
	} {
		t.Run(host, func(t *testing.T) {
			t.Setenv("DOCKER_HOST", host)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			c, err := New(ctx)
			if err == nil {
				c.Close()
				t.Fatalf("New with DOCKER_HOST=%s succeeded", host)
			}
			if !errors.Is(err, sandbox.ErrUnavailable) {
				t.Errorf("New: err = %v, want ErrUnavailable", err)
			}
			if !strings.Contains(err.Error(), "is the Docker daemon running?") {
				t.Errorf("New: error %q does not say how to fix it", err)
			}
		})
	}
}

func TestNewRefusesTooOldDaemon(t *testing.T) {
	// Not a Docker mock: a stand-in daemon that only answers the ping, with
	// an API version below what the SDK supports.
	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Api-Version", "1.24")
		w.WriteHeader(http.StatusOK)
	}))
	defer old.Close()
	t.Setenv("DOCKER_HOST", "tcp://"+old.Listener.Addr().String())
	t.Setenv("DOCKER_API_VERSION", "")
	c, err := New(t.Context())
	if err == nil {
		c.Close()
		t.Fatal("New accepted a daemon speaking API 1.24")
	}
	if !errors.Is(err, sandbox.ErrUnsupported) || !strings.Contains(err.Error(), "too old") {
		t.Errorf("New: err = %v, want ErrUnsupported saying the daemon is too old", err)
	}
}

// writeContext stores a docker context the way `docker context create` does.
func writeContext(t *testing.T, dir, name, host string) {
	t.Helper()
	sum := sha256.Sum256([]byte(name))
	meta := fmt.Sprintf(`{"Name":%q,"Metadata":{},"Endpoints":{"docker":{"Host":%q,"SkipTLSVerify":false}}}`, name, host)
	writeFile(t, filepath.Join(dir, "contexts", "meta", hex.EncodeToString(sum[:]), "meta.json"), meta)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
