package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestConnectSaysWhichRuntimeIsMissing(t *testing.T) {
	_, err := Connect(context.Background(), "no-such-runtime", "")
	if !errors.Is(err, sandbox.ErrUnsupported) {
		t.Fatalf("Connect to a runtime not linked in: %v, want sandbox.ErrUnsupported", err)
	}
	if !strings.Contains(err.Error(), `"no-such-runtime"`) || !strings.Contains(err.Error(), "engine/runtime/docker") {
		t.Errorf("the error does not name the runtime and the package to import: %v", err)
	}
}

func TestConnectPassesTheHostToTheRegisteredRuntime(t *testing.T) {
	var got string
	t.Cleanup(func() { // the registry is the program's: -count runs this again
		mu.Lock()
		delete(connectors, "test-runtime")
		mu.Unlock()
	})
	Register("test-runtime", func(ctx context.Context, host string) (Runtime, error) {
		got = host
		return nil, sandbox.ErrUnavailable
	})
	if _, err := Connect(context.Background(), "test-runtime", "unix:///x.sock"); !errors.Is(err, sandbox.ErrUnavailable) {
		t.Errorf("Connect returned %v, want the connector's error", err)
	}
	if got != "unix:///x.sock" {
		t.Errorf("the connector got host %q", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a name twice did not panic")
		}
	}()
	Register("test-runtime", nil)
}

func TestEndpointLocality(t *testing.T) {
	for host, local := range map[string]bool{
		"unix:///var/run/docker.sock":    true,
		"npipe:////./pipe/docker_engine": true,
		"ssh://me@box":                   false,
		"tcp://10.0.0.2:2376":            false,
	} {
		if got := (Endpoint{Host: host}).Local(); got != local {
			t.Errorf("Endpoint{%s}.Local() = %v", host, got)
		}
	}
	if s := (Endpoint{Host: "unix:///s", Source: "Colima", Why: "set explicitly"}).String(); s != "unix:///s (Colima: set explicitly)" {
		t.Errorf("String() = %q", s)
	}
}
