package mcpserver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/engine/sandbox"
)

var snapTaken = sandbox.SnapshotInfo{ID: "0123456789ab", Label: "before", Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), SizeBytes: 3 << 20}

func (f *fakeBackend) Snapshot(_ context.Context, owner sandbox.Owner, ref string, req sandbox.SnapshotRequest) (sandbox.SnapshotInfo, error) {
	return snapTaken, f.record("Snapshot", owner, ref, req)
}

func (f *fakeBackend) ListSnapshots(_ context.Context, ref string) ([]sandbox.SnapshotInfo, error) {
	return []sandbox.SnapshotInfo{snapTaken}, f.record("ListSnapshots", sandbox.Owner{}, ref, nil)
}

func (f *fakeBackend) DeleteSnapshot(_ context.Context, owner sandbox.Owner, ref, snap string) error {
	return f.record("DeleteSnapshot", owner, ref, snap)
}

func (f *fakeBackend) Restore(_ context.Context, owner sandbox.Owner, ref, snap string) (sandbox.RestoreResult, error) {
	return sandbox.RestoreResult{SandboxID: "0123456789abcdef0123", Name: "calm-otter", SnapshotID: snap, KernelsRestarted: true, JobsEnded: 1, Milliseconds: 900},
		f.record("Restore", owner, ref, snap)
}

func (f *fakeBackend) Fork(_ context.Context, owner sandbox.Owner, ref string, req sandbox.ForkRequest) ([]sandbox.Fork, error) {
	var out []sandbox.Fork
	for i := range req.Count {
		out = append(out, sandbox.Fork{SandboxID: strings.Repeat("ab", 6) + string(rune('0'+i)), Name: req.Name})
	}
	return out, f.record("Fork", owner, ref, req)
}

func TestSnapshotTools(t *testing.T) {
	fake := newFake()
	c := mcpGoClient(t, serveWith(t, New(fake, Options{})))

	res := callMCPGo(t, c, "snapshot_sandbox", map[string]any{"sandbox_id": "calm-otter", "label": "before"})
	if res.IsError || !strings.Contains(textOfResult(res), "restore_sandbox snapshot_id \"0123456789ab\"") {
		t.Errorf("snapshot_sandbox: %s", textOfResult(res))
	}
	if got := fake.lastCall().Req; got != (sandbox.SnapshotRequest{Label: "before"}) {
		t.Errorf("snapshot request %+v", got)
	}

	res = callMCPGo(t, c, "restore_sandbox", map[string]any{"sandbox_id": "calm-otter", "snapshot_id": "0123456789ab"})
	m := structuredMap(t, res)
	if res.IsError || m["kernels_restarted"] != true || !strings.Contains(textOfResult(res), "kernels restarted") || !strings.Contains(textOfResult(res), "1 background job was stopped") {
		t.Errorf("restore_sandbox: %v %s", m, textOfResult(res))
	}

	res = callMCPGo(t, c, "fork_sandbox", map[string]any{"sandbox_id": "calm-otter", "count": 2, "name": "try"})
	if m := structuredMap(t, res); res.IsError || len(m["sandboxes"].([]any)) != 2 {
		t.Errorf("fork_sandbox: %v %s", m, textOfResult(res))
	}
	if got := fake.lastCall().Req; got != (sandbox.ForkRequest{Count: 2, Name: "try"}) {
		t.Errorf("fork request %+v", got)
	}

	res = callMCPGo(t, c, "list_snapshots", map[string]any{"sandbox_id": "calm-otter"})
	if res.IsError || !strings.Contains(textOfResult(res), "1 snapshot.") || !strings.Contains(textOfResult(res), `"before", 3 MiB, taken 2026-01-02T03:04:05Z`) {
		t.Errorf("list_snapshots: %s", textOfResult(res))
	}
	res = callMCPGo(t, c, "delete_snapshot", map[string]any{"sandbox_id": "calm-otter"})
	if !res.IsError || !strings.Contains(textOfResult(res), "snapshot_id") {
		t.Errorf("delete_snapshot without snapshot_id: %s", textOfResult(res))
	}
}

// The engine is a Backend, snapshots included: every tool set is
// registered in sandtray. A backend without snapshots cannot be served at
// all, where it used to get "This Sandtray has no snapshots." at run time.
var _ Backend = (*engine.Engine)(nil)
