package securitytest

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestForeignContainers: a tool call naming a container Sandtray does not
// manage (a plain one, or a managed one that belongs to another engine) is
// refused by every tool, and the container is left exactly as it was.
func TestForeignContainers(t *testing.T) {
	e := newEnv(t)
	c := e.client
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	plainName := "foreign-" + randomName()
	plain := e.startContainer(t, ctx, plainName, e.labels) // only the test label: not managed
	otherLabels := maps.Clone(e.labels)
	otherLabels[sandbox.LabelManaged] = "true"
	otherLabels[sandbox.LabelTest] += "-other-engine"
	otherLabels[sandbox.LabelName] = "other-" + randomName()
	otherName := "sandtray-" + otherLabels[sandbox.LabelName]
	other := e.startContainer(t, ctx, otherName, otherLabels)

	for _, target := range []struct{ id, name string }{{plain, plainName}, {other, otherName}} {
		before := e.inspect(t, target.id)
		for _, ref := range []string{target.id, target.id[:12], target.name, "/" + target.name} {
			for _, call := range toolsOn(ref, e.root) {
				r := c.call(t, call.tool, call.args)
				if r.err != nil {
					t.Errorf("%s on foreign %s: a JSON-RPC error instead of a refusal: %v", call.tool, ref, r.err)
					continue
				}
				if !r.isError {
					t.Errorf("%s on foreign container %s was not refused: %s", call.tool, ref, r.text)
				}
			}
		}
		after := e.inspect(t, target.id)
		for _, field := range []string{"State", "ExecIDs", "RestartCount", "Config", "HostConfig"} {
			if !jsonEqual(before[field], after[field]) {
				t.Errorf("the foreign container's %s changed:\nbefore %v\nafter  %v", field, before[field], after[field])
			}
		}
	}
	r := c.ok(t, "list_sandboxes", nil)
	for _, s := range r.data["sandboxes"].([]any) {
		if id := s.(map[string]any)["id"]; id == plain || id == other {
			t.Errorf("list_sandboxes shows a container Sandtray does not manage: %v", s)
		}
	}
}

type toolCall struct {
	tool string
	args map[string]any
}

// toolsOn is a call of every tool that takes a sandbox (or job) reference.
func toolsOn(ref, root string) []toolCall {
	s := func(extra map[string]any) map[string]any {
		args := map[string]any{"sandbox_id": ref}
		maps.Copy(args, extra)
		return args
	}
	return []toolCall{
		{"execute_code", s(map[string]any{"code": "print(1)"})},
		{"execute_command", s(map[string]any{"command": "touch /pwned"})},
		{"write_file", s(map[string]any{"path": "/pwned", "content": "x"})},
		{"read_file", s(map[string]any{"path": "/etc/hostname"})},
		{"list_files", s(map[string]any{"path": "/"})},
		{"make_directory", s(map[string]any{"path": "/pwned"})},
		{"copy_to_sandbox", s(map[string]any{"host_path": root})},
		{"copy_from_sandbox", s(map[string]any{"path": "/etc/hostname", "host_path": root + "/stolen"})},
		{"install_packages", s(map[string]any{"packages": []string{"cowsay"}})},
		{"persist_sandbox", s(nil)},
		{"commit_sandbox", s(map[string]any{"image": "sandtray-test/pwned:1"})},
		{"export_dockerfile", s(nil)},
		{"diff_sandbox", s(nil)},
		{"snapshot_sandbox", s(map[string]any{"label": "pwned"})},
		{"list_snapshots", s(nil)},
		{"delete_snapshot", s(map[string]any{"snapshot_id": "0123456789ab"})},
		{"restore_sandbox", s(map[string]any{"snapshot_id": "0123456789ab"})},
		{"fork_sandbox", s(nil)},
		{"sandbox_logs", s(nil)},
		{"stop_sandbox", s(nil)},
		{"delete_sandbox", s(nil)},
		{"job_status", map[string]any{"job_id": ref}},
		{"job_stop", map[string]any{"job_id": ref}},
	}
}

// startContainer creates and starts a container with the docker client,
// not through the engine.
func (e *env) startContainer(t *testing.T, ctx context.Context, name string, labels map[string]string) string {
	t.Helper()
	id, err := e.docker.Create(ctx, runtime.CreateOptions{Name: name, Image: e.cfg.DefaultImage, Labels: labels,
		Cmd: []string{"sleep", "infinity"}, MemoryMB: 64, MilliCPUs: 100, PidsLimit: 32})
	if err != nil {
		t.Fatalf("create foreign container: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := e.docker.Remove(ctx, id); err != nil {
			t.Errorf("remove foreign container %s: %v", name, err)
		}
	})
	if err := e.docker.Start(ctx, id); err != nil {
		t.Fatalf("start foreign container: %v", err)
	}
	return id
}
