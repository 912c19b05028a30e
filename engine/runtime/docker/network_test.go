package docker_test

import (
	"context"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime/docker"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/test/dockertest"
)

// testNetwork is a network name of this test's own (never Sandtray's bridge,
// which other engines on the daemon use), whose networks are removed when
// the test ends.
func testNetwork(t *testing.T, c *docker.Client) string {
	t.Helper()
	name := "sandtray-test-net-" + sandbox.RandomHex(6)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		ids, _ := c.NetworkIDs(ctx, name)
		for _, id := range ids {
			if err := c.RemoveNetwork(ctx, id); err != nil {
				t.Errorf("cleanup: remove network %s: %v", id, err)
			}
		}
	})
	return name
}

// TestTwinNetworksResolved (F37): two networks of the bridge's name, as two
// engines starting their first bridged sandbox at once leave them on a
// Docker that allows it (before API 1.44), made every container that names
// it fail as ambiguous; the next ensure keeps the older and removes the
// other, and never the one a sandbox is on.
func TestTwinNetworksResolved(t *testing.T) {
	ctx := testCtx(t)
	c := dockertest.Client(t)
	name := testNetwork(t, c)
	older, err := c.CreateTwinNetwork(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTwinNetwork(ctx, name); err != nil {
		t.Fatal(err)
	}
	if ids, _ := c.NetworkIDs(ctx, name); len(ids) != 2 {
		t.Skipf("this daemon refuses a second network of one name (%d made): nothing to resolve", len(ids))
	}
	if err := c.EnsureNetwork(ctx, name); err != nil {
		t.Fatalf("ensure with twins: %v", err)
	}
	if ids, _ := c.NetworkIDs(ctx, name); !slices.Equal(ids, []string{older}) {
		t.Errorf("after the ensure: %v, want only the older %s", ids, older)
	}

	// The network a sandbox is on stays, and so does the sandbox on it.
	o := createOptions(t)
	o.Network = name
	id, err := c.Create(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTwinNetwork(ctx, name); err != nil {
		t.Fatal(err)
	}
	if err := c.EnsureNetwork(ctx, name); err != nil {
		t.Fatalf("ensure with twins, one in use: %v", err)
	}
	if ids, _ := c.NetworkIDs(ctx, name); !slices.Equal(ids, []string{older}) {
		t.Errorf("after the ensure: %v, want only %s, which a sandbox is on", ids, older)
	}
	if got, err := c.Inspect(ctx, id); err != nil || got.State != "running" || !slices.Contains(got.Networks, name) {
		t.Errorf("the sandbox on the network: %+v, %v; want it running on %s", got, err, name)
	}
	if err := c.Remove(ctx, id); err != nil {
		t.Fatal(err)
	}
}

// TestEnginesRaceForTheNetwork (F37): engines (each its own client) that
// make the network at the same moment end with one network and no error.
func TestEnginesRaceForTheNetwork(t *testing.T) {
	ctx := testCtx(t)
	const engines = 4
	clients := make([]*docker.Client, engines)
	for i := range clients {
		clients[i] = dockertest.Client(t)
	}
	for range 3 {
		name := testNetwork(t, clients[0])
		errs := make([]error, engines)
		var wg sync.WaitGroup
		for i, c := range clients {
			wg.Go(func() { errs[i] = c.EnsureNetwork(ctx, name) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("engine %d: %v", i, err)
			}
		}
		if ids, _ := clients[0].NetworkIDs(ctx, name); len(ids) != 1 {
			t.Errorf("after the race: %d networks named %s, want 1", len(ids), name)
		}
	}
}

// racingDaemon is a client of the Docker daemon at sock through a loopback
// proxy that runs before and after around the first request of method
// whose path ends in pathSuffix: what another engine on the daemon does
// between this engine's calls.
func racingDaemon(t *testing.T, sock, method, pathSuffix string, before, after func()) *docker.Client {
	t.Helper()
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.Out.URL.Scheme, r.Out.URL.Host = "http", "docker" },
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}},
	}
	var hooked atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method || !strings.HasSuffix(r.URL.Path, pathSuffix) || hooked.Swap(true) {
			proxy.ServeHTTP(w, r)
			return
		}
		before()
		rec := httptest.NewRecorder()
		proxy.ServeHTTP(rec, r)
		after()
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(srv.Close)
	c, err := docker.Connect(testCtx(t), "tcp://"+srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestNetworkRacesSettle: the two ways a racing engine's moves land between
// this engine's calls end in one network and no error. An engine whose
// older network made this one's a twin removes it before this engine looks
// at it; and an engine that lists too early makes a twin after this engine
// removed one.
func TestNetworkRacesSettle(t *testing.T) {
	direct := dockertest.Client(t)
	sock, ok := strings.CutPrefix(direct.Endpoint().Host, "unix://")
	if !ok {
		t.Skipf("the racing proxy reaches the daemon on a unix socket, not %s", direct.Endpoint().Host)
	}
	probe := testNetwork(t, direct)
	for range 2 {
		direct.CreateTwinNetwork(testCtx(t), probe)
	}
	if ids, _ := direct.NetworkIDs(testCtx(t), probe); len(ids) != 2 {
		t.Skipf("this daemon refuses a second network of one name (%d made): nothing to race", len(ids))
	}
	t.Run("its network removed as the younger twin", func(t *testing.T) {
		ctx := testCtx(t)
		name := testNetwork(t, direct)
		var older string
		c := racingDaemon(t, sock, http.MethodPost, "/networks/create",
			func() { older = must(direct.CreateTwinNetwork(ctx, name)) },
			func() {
				for _, id := range must(direct.NetworkIDs(ctx, name)) {
					if id != older {
						_ = direct.RemoveNetwork(ctx, id)
					}
				}
			})
		if err := c.EnsureNetwork(ctx, name); err != nil {
			t.Fatalf("ensure while another engine keeps its older network: %v", err)
		}
		if ids := must(direct.NetworkIDs(ctx, name)); !slices.Equal(ids, []string{older}) {
			t.Errorf("after the race: %v, want only the older %s", ids, older)
		}
	})
	t.Run("a twin made after a removal", func(t *testing.T) {
		ctx := testCtx(t)
		name := testNetwork(t, direct)
		older := must(direct.CreateTwinNetwork(ctx, name))
		must(direct.CreateTwinNetwork(ctx, name))
		c := racingDaemon(t, sock, http.MethodDelete, "", func() {}, func() { must(direct.CreateTwinNetwork(ctx, name)) })
		if err := c.EnsureNetwork(ctx, name); err != nil {
			t.Fatalf("ensure while another engine makes a late twin: %v", err)
		}
		if ids := must(direct.NetworkIDs(ctx, name)); !slices.Equal(ids, []string{older}) {
			t.Errorf("after the race: %v, want only the older %s", ids, older)
		}
	})
}

// must is v, or a panic: the hooks run on the proxy's goroutine, where a
// test may not stop, and a failure there means the daemon broke.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
