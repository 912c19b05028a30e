package securitytest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// localRegistry starts a registry (Debian's docker-registry) on a loopback
// port, pushes image to it, removes image from this machine and returns the
// pullable reference and the registry's host:port. It skips the test when
// the registry is not installed.
func localRegistry(t *testing.T, image string) (ref, host string) {
	t.Helper()
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		t.Skip("no docker-registry (apt-get install docker-registry) to pull from; no other registry is reachable here")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host = ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yml")
	os.WriteFile(cfg, fmt.Appendf(nil, "version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n", filepath.Join(dir, "data"), host), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	srv := exec.CommandContext(ctx, bin, "serve", cfg)
	if err := srv.Start(); err != nil {
		cancel()
		t.Fatalf("start docker-registry: %v", err)
	}
	t.Cleanup(func() { cancel(); srv.Wait() })
	eventually(t, 10*time.Second, "the registry answers", func() bool {
		res, err := http.Get("http://" + host + "/v2/")
		if err == nil {
			res.Body.Close()
		}
		return err == nil && res.StatusCode == http.StatusOK
	})
	ref = host + "/sandtray-pulltest:" + randomName()
	docker := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("docker", args...).CombinedOutput(); err != nil {
			t.Fatalf("docker %v: %v\n%s", args, err, out)
		}
	}
	docker("tag", image, ref)
	docker("push", ref)
	docker("rmi", ref, image) // its own layer goes too: a pull must download it
	t.Cleanup(func() { exec.Command("docker", "rmi", "-f", ref).Run() })
	return ref, host
}

// TestPullFromAllowedRegistry (F13, F18): an image from a registry in
// pull.registries is pulled, with progress reported to the caller; one
// whose layers add up to more than pull.max_mb is refused, naming the key,
// and left absent.
func TestPullFromAllowedRegistry(t *testing.T) {
	base := newEnv(t)
	// 3 MB of random bytes, which do not compress: a layer of its own.
	ref, host := localRegistry(t, base.buildImage(t, "RUN head -c 3000000 /dev/urandom > /random"))

	small := newEnv(t, func(c *config.Config) { c.Pull.Registries = []string{host}; c.Pull.MaxMB = 1; c.Pool.Size = 0 })
	small.client.refused(t, "create_sandbox", map[string]any{"image": ref}, "pull.max_mb")
	if ok, err := small.docker.ImageExists(context.Background(), ref); err != nil || ok {
		t.Errorf("after a pull over the limit, the image is on this machine: %v, %v", ok, err)
	}

	e := newEnv(t, func(c *config.Config) { c.Pull.Registries = []string{host}; c.Pool.Size = 0 })
	var progress atomic.Int32
	c := e.connectWith(t, &sdk.ClientOptions{ProgressNotificationHandler: func(context.Context, *sdk.ProgressNotificationClientRequest) {
		progress.Add(1)
	}})
	params := &sdk.CallToolParams{Name: "create_sandbox", Arguments: map[string]any{"image": ref}}
	params.SetProgressToken("pull")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := c.cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("create_sandbox from %s: %v %+v", ref, err, res)
	}
	if progress.Load() == 0 {
		t.Error("the pull reported no progress to the caller")
	}
	out := c.command(t, strings.TrimSpace(fmt.Sprint(res.StructuredContent.(map[string]any)["sandbox_id"])), "echo pulled", 20)
	if out.stdout != "pulled\n" {
		t.Errorf("a sandbox from the pulled image: %v", out.result)
	}
}
