package docker_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/runtime/docker"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/testwait"
	"github.com/sandtray/sandtray/test/dockertest"
)

func TestCreateRefusesUnlimited(t *testing.T) {
	c := dockertest.Client(t)
	ctx := testCtx(t)
	for name, change := range map[string]func(*runtime.CreateOptions){
		"no memory limit":            func(o *runtime.CreateOptions) { o.MemoryMB = 0 },
		"no CPU limit":               func(o *runtime.CreateOptions) { o.MilliCPUs = 0 },
		"a CPU limit Docker rounds":  func(o *runtime.CreateOptions) { o.MilliCPUs = 1 },
		"no pids limit":              func(o *runtime.CreateOptions) { o.PidsLimit = 0 },
		"a negative memory limit":    func(o *runtime.CreateOptions) { o.MemoryMB = -1 },
		"uid 0 by number":            func(o *runtime.CreateOptions) { o.User = "0:0" },
		"uid 0 by the image's names": func(o *runtime.CreateOptions) { o.User = "root" },
	} {
		o := createOptions(t)
		change(&o)
		if _, err := c.Create(ctx, o); !errors.Is(err, sandbox.ErrInvalid) {
			t.Errorf("Create with %s: err = %v, want ErrInvalid", name, err)
		}
		if left, err := c.List(ctx, o.Labels, true); err != nil || len(left) > 0 {
			t.Errorf("after Create with %s: %d containers left (%v), want none", name, len(left), err)
		}
	}
}

func TestCreateResolvesUserToIDs(t *testing.T) {
	c := dockertest.Client(t)
	o := createOptions(t)
	o.User = "nobody"
	id := startContainer(t, c, o)
	raw, err := c.InspectRaw(testCtx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Config struct{ User string } }
	if err := json.Unmarshal(raw, &doc); err != nil || doc.Config.User != "65534:65534" {
		t.Errorf("Config.User = %q (%v), want nobody's ids 65534:65534, so Docker never looks the name up again", doc.Config.User, err)
	}
}

func TestBridgeIsSandtrays(t *testing.T) {
	c := dockertest.Client(t)
	ctx := testCtx(t)
	o := createOptions(t)
	o.Network = sandbox.NetworkBridge
	id := startContainer(t, c, o)
	ctr, err := c.Inspect(ctx, id)
	if err != nil || len(ctr.Networks) != 1 || ctr.Networks[0] != sandbox.NetworkBridge {
		t.Fatalf("Inspect networks = %v, %v; want [bridge]", ctr.Networks, err)
	}
	raw, err := c.InspectRaw(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		HostConfig      struct{ NetworkMode string }
		NetworkSettings struct{ Networks map[string]any }
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc.NetworkSettings.Networks[docker.BridgeNetwork]; !ok || doc.HostConfig.NetworkMode != docker.BridgeNetwork {
		t.Errorf("NetworkMode %q, networks %v; want only %s", doc.HostConfig.NetworkMode, doc.NetworkSettings.Networks, docker.BridgeNetwork)
	}
}

func TestExecEntersWorkdirInside(t *testing.T) {
	c, id := newSandbox(t)
	ctx := testCtx(t)
	var out, errOut bytes.Buffer
	code, err := c.Exec(ctx, id, runtime.ExecOptions{Cmd: []string{"pwd"}, Workdir: "/workspace", Stdout: &out, Stderr: &errOut})
	if err != nil || code != 0 || out.String() != "/workspace\n" {
		t.Fatalf("pwd in /workspace = %q, %d, %v (%s)", out.String(), code, err, errOut.String())
	}
	run(t, c, id, "sh", "-c", "rm -rf /workspace && ln -s /proc/self/fd/7 /workspace")
	out.Reset()
	code, err = c.Exec(ctx, id, runtime.ExecOptions{Cmd: []string{"pwd"}, Workdir: "/workspace", Stdout: &out, Stderr: &errOut})
	if err != nil || code != 0 || out.String() != "/\n" || !strings.Contains(errOut.String(), "cannot enter the workdir /workspace") {
		t.Errorf("pwd with /workspace swapped for a symlink = %q, %d, %v, stderr %q; want / and a note", out.String(), code, err, errOut.String())
	}
}

// TestBridgeKeepsSandboxesApart: a bridged sandbox is made only on a network
// whose inter-container traffic is off. Docker Engine honours the option;
// Podman's compatible API ignores it with a warning (run by make
// test-podman), and there the create is refused, saying why and what to
// use, with nothing left behind.
func TestBridgeKeepsSandboxesApart(t *testing.T) {
	c := dockertest.Client(t)
	ctx := testCtx(t)
	o := createOptions(t)
	o.Network = sandbox.NetworkBridge
	id, err := c.Create(ctx, o)
	opts, exists, ierr := c.BridgeOptions(ctx)
	if ierr != nil {
		t.Fatal(ierr)
	}
	if err == nil {
		if !exists || opts["com.docker.network.bridge.enable_icc"] != "false" {
			t.Errorf("created sandbox %s on %s with options %v; want enable_icc=false", id, docker.BridgeNetwork, opts)
		}
		return
	}
	if !errors.Is(err, sandbox.ErrUnsupported) || !strings.Contains(err.Error(), "could reach each other") || !strings.Contains(err.Error(), `network "none"`) {
		t.Errorf("bridged create refused with %v; want ErrUnsupported saying sandboxes could reach each other and what to use", err)
	}
	// Another package's test may be making (and removing) it at this moment.
	testwait.Eventually(t, 10*time.Second, docker.BridgeNetwork+" removed after the refusal", func() bool {
		_, exists, err := c.BridgeOptions(ctx)
		return err == nil && !exists
	})
}
