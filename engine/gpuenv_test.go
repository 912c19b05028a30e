package engine

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestEnvForTheGPUToolkitIsRefused: env names that steer the NVIDIA
// Container Toolkit (NVIDIA_*, LD_*, in any case) are refused from
// create_sandbox and execute_command with ErrForbidden and a sentence
// pointing at gpus, before anything is made or run (docs/security.md F35).
func TestEnvForTheGPUToolkitIsRefused(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	for _, name := range []string{"NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "LD_PRELOAD", "LD_LIBRARY_PATH", "ld_preload", "Nvidia_Visible_Devices"} {
		_, err := te.Create(ctx, te.owner, sandbox.CreateRequest{Env: map[string]string{"OK": "1", name: "all"}}, nil)
		wantKind(t, err, sandbox.ErrForbidden)
		if !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "create_sandbox's gpus") {
			t.Errorf("create_sandbox env %s: %v; want a refusal naming it and gpus", name, err)
		}
	}
	if list, err := te.docker.List(ctx, te.labels, true); err != nil || len(list) != 0 {
		t.Fatalf("refused creates left %d containers (%v)", len(list), err)
	}
	id := te.create(t, sandbox.CreateRequest{Env: map[string]string{"LDAP_HOST": "x", "MY_NVIDIA": "y"}}).ID
	_, err := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "touch /tmp/ran", Env: map[string]string{"LD_PRELOAD": "/tmp/x.so"}})
	wantKind(t, err, sandbox.ErrForbidden)
	if !strings.Contains(err.Error(), "execute_command's env may not set LD_PRELOAD") || !strings.Contains(err.Error(), "export LD_PRELOAD=") {
		t.Errorf("execute_command env LD_PRELOAD: %v", err)
	}
	if out := te.command(t, id, "test -e /tmp/ran && echo ran || echo not; echo $LDAP_HOST $MY_NVIDIA"); out.Stdout != "not\nx y\n" {
		t.Errorf("after the refusal: %q; want nothing run, and names that merely contain LD or NVIDIA kept", out.Stdout)
	}
}

// TestSandboxesWithoutGPUsSayVoid: every sandbox without GPUs has
// NVIDIA_VISIBLE_DEVICES=void in its container's env (docker inspect) and
// in what runs in it, however it was made: cold with its first kernel on
// the attachment, cold without, and from the warm pool (docs/security.md F35).
func TestSandboxesWithoutGPUsSayVoid(t *testing.T) {
	warm := newPoolEngine(t, 1)
	pooled := warm.create(t, sandbox.CreateRequest{}).ID
	if !warm.fromPool(t, pooled) {
		t.Fatal("the create did not take the pool's spare")
	}
	cold := newTestEngine(t) // no pool
	cold.attachFirst = true  // also where the daemon is not Docker Engine (engine.go)
	attached := cold.create(t, sandbox.CreateRequest{}).ID
	shell := cold.create(t, sandbox.CreateRequest{Language: "bash"}).ID
	ctx := context.Background()
	for _, sb := range []struct {
		name string
		te   *testEngine
		id   string
	}{{"pooled", warm, pooled}, {"cold, attached", cold, attached}, {"cold, bash", cold, shell}} {
		name, te, id := sb.name, sb.te, sb.id
		raw, err := te.docker.InspectRaw(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ Config struct{ Env []string } }
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(doc.Config.Env, "NVIDIA_VISIBLE_DEVICES=void") {
			t.Errorf("%s: docker inspect shows env %q; want NVIDIA_VISIBLE_DEVICES=void", name, doc.Config.Env)
		}
		if out := te.command(t, id, "env | grep ^NVIDIA_"); out.Stdout != "NVIDIA_VISIBLE_DEVICES=void\n" {
			t.Errorf("%s: env in the sandbox says %q", name, out.Stdout)
		}
		r := te.code(t, id, sandbox.CodeRequest{Code: "import os\nprint(os.environ.get('NVIDIA_VISIBLE_DEVICES'), os.getppid() == 1)"})
		if !strings.HasPrefix(r.Stdout, "void ") {
			t.Errorf("%s: python's kernel sees NVIDIA_VISIBLE_DEVICES %q", name, r.Stdout)
		}
	}
}
