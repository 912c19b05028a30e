package docker_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/test/dockertest"
)

// inspectDoc is the part of Docker's inspect JSON the hardening test checks;
// decoding it here keeps the SDK's types out of the tests.
type inspectDoc struct {
	HostConfig struct {
		CapDrop       []string
		CapAdd        []string
		SecurityOpt   []string
		Init          *bool
		Privileged    bool
		RestartPolicy struct{ Name string }
		NetworkMode   string
		Memory        int64
		MemorySwap    int64
		NanoCpus      int64
		PidsLimit     *int64
		Binds         []string
		Mounts        []json.RawMessage
		VolumesFrom   []string
	}
	Mounts []json.RawMessage
	Config struct {
		Tty       bool
		OpenStdin bool
		Hostname  string
		Env       []string
	}
}

func TestCreateAppliesHardening(t *testing.T) {
	c := dockertest.Client(t)
	ctx := testCtx(t)
	o := createOptions(t)
	o.CapAdd = []string{"CHOWN", "SETUID"}
	o.Hostname = "sbx"
	o.Env = []string{"SANDTRAY_TEST=1"}
	id := startContainer(t, c, o)

	raw, err := c.InspectRaw(ctx, id)
	if err != nil {
		t.Fatalf("InspectRaw: %v", err)
	}
	var doc inspectDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("decode inspect JSON: %v\n%s", err, raw)
	}
	hc := doc.HostConfig
	checks := []struct {
		name string
		ok   bool
		got  any
	}{
		{"CapDrop contains ALL", slices.Contains(hc.CapDrop, "ALL"), hc.CapDrop},
		{"CapAdd is what was asked (normalised)", cmp.Equal(hc.CapAdd, []string{"CAP_CHOWN", "CAP_SETUID"}), hc.CapAdd},
		{"SecurityOpt is exactly no-new-privileges (default seccomp)", cmp.Equal(hc.SecurityOpt, []string{"no-new-privileges"}), hc.SecurityOpt},
		{"Init is true", hc.Init != nil && *hc.Init, hc.Init},
		{"not privileged", !hc.Privileged, hc.Privileged},
		{"restart policy no", hc.RestartPolicy.Name == "no", hc.RestartPolicy.Name},
		{"network none", hc.NetworkMode == "none", hc.NetworkMode},
		{"memory limit", hc.Memory == testMemoryMB<<20, hc.Memory},
		{"swap equals memory", hc.MemorySwap == hc.Memory, hc.MemorySwap},
		{"NanoCPUs", hc.NanoCpus == testMilliCPUs*1e6, hc.NanoCpus},
		{"PidsLimit", hc.PidsLimit != nil && *hc.PidsLimit == testPidsLimit, hc.PidsLimit},
		{"no binds", len(hc.Binds) == 0, hc.Binds},
		{"no host-config mounts", len(hc.Mounts) == 0, hc.Mounts},
		{"no volumes-from", len(hc.VolumesFrom) == 0, hc.VolumesFrom},
		{"no mounts at all", len(doc.Mounts) == 0, doc.Mounts},
		{"no TTY", !doc.Config.Tty, doc.Config.Tty},
		{"no stdin", !doc.Config.OpenStdin, doc.Config.OpenStdin},
		{"hostname", doc.Config.Hostname == "sbx", doc.Config.Hostname},
		{"env", slices.Contains(doc.Config.Env, "SANDTRAY_TEST=1"), doc.Config.Env},
	}
	for _, ch := range checks {
		if !ch.ok {
			t.Errorf("%s: got %v", ch.name, ch.got)
		}
	}

	// The init is PID 1 and the given Cmd runs under it, not the image's entrypoint.
	if got := run(t, c, id, "cat", "/proc/1/comm"); strings.TrimSpace(got) != "docker-init" {
		t.Errorf("PID 1 is %q, want docker-init", got)
	}
	// What the kernel enforces on a process exec'd in the sandbox.
	status := run(t, c, id, "cat", "/proc/self/status")
	for _, want := range []string{
		"CapEff:\t0000000000000081", // CAP_CHOWN (bit 0) and CAP_SETUID (bit 7) only
		"CapBnd:\t0000000000000081",
		"NoNewPrivs:\t1",
		"Seccomp:\t2", // a filter: Docker's default profile
	} {
		if !strings.Contains(status, want+"\n") {
			t.Errorf("/proc/self/status lacks %q:\n%s", want, status)
		}
	}
}

func TestInspectReportsContainer(t *testing.T) {
	c := dockertest.Client(t)
	ctx := testCtx(t)
	o := createOptions(t)
	o.Name = "sandtray-test-" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	before := time.Now().Add(-time.Minute)
	id := startContainer(t, c, o)

	got, err := c.Inspect(ctx, id)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	if got.ID != id || got.Name != o.Name || got.Image != o.Image || got.State != "running" {
		t.Errorf("Inspect = %+v, want id %s, name %s, image %s, running", got, id, o.Name, o.Image)
	}
	if !strings.HasPrefix(got.ImageID, "sha256:") || got.Created.Before(before) {
		t.Errorf("Inspect = %+v, want a sha256 image id and a recent creation time", got)
	}
	for k, v := range o.Labels {
		if got.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, got.Labels[k], v)
		}
	}

	// A second container with the same name is a conflict.
	if _, err := c.Create(ctx, o); !errors.Is(err, sandbox.ErrConflict) {
		t.Errorf("Create with a taken name: err = %v, want ErrConflict", err)
	}
}

func TestLifecycle(t *testing.T) {
	c, id := newSandbox(t)
	ctx := testCtx(t)
	steps := []struct {
		name  string
		do    func() error
		state string
	}{
		{"stop", func() error { return c.Stop(ctx, id, time.Second) }, "exited"},
		{"stop again is a no-op", func() error { return c.Stop(ctx, id, time.Second) }, "exited"},
		{"start", func() error { return c.Start(ctx, id) }, "running"},
		{"kill", func() error { return c.Kill(ctx, id) }, "exited"},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		got, err := c.Inspect(ctx, id)
		if err != nil {
			t.Fatalf("%s: Inspect: %v", s.name, err)
		}
		if string(got.State) != s.state {
			t.Errorf("after %s: state %q, want %q", s.name, got.State, s.state)
		}
	}
	if err := c.Kill(ctx, id); !errors.Is(err, sandbox.ErrConflict) {
		t.Errorf("Kill of a stopped container: err = %v, want ErrConflict", err)
	}
	if err := c.Remove(ctx, id); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := c.Inspect(ctx, id); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("Inspect after Remove: err = %v, want ErrNotFound", err)
	}
}

func TestUnknownContainer(t *testing.T) {
	c := dockertest.Client(t)
	ctx := testCtx(t)
	const id = "sandtray-no-such-container"
	calls := []struct {
		name string
		call func() error
		want error // nil: must succeed
	}{
		{"Inspect", func() error { _, err := c.Inspect(ctx, id); return err }, sandbox.ErrNotFound},
		{"InspectRaw", func() error { _, err := c.InspectRaw(ctx, id); return err }, sandbox.ErrNotFound},
		{"Start", func() error { return c.Start(ctx, id) }, sandbox.ErrNotFound},
		{"Stop", func() error { return c.Stop(ctx, id, time.Second) }, sandbox.ErrNotFound},
		{"Kill", func() error { return c.Kill(ctx, id) }, sandbox.ErrNotFound},
		{"Stats", func() error { _, err := c.Stats(ctx, id); return err }, sandbox.ErrNotFound},
		{"Diff", func() error { _, err := c.Diff(ctx, id); return err }, sandbox.ErrNotFound},
		{"StatPath", func() error { _, err := c.StatPath(ctx, id, "/"); return err }, sandbox.ErrNotFound},
		{"Exec", func() error { _, err := c.Exec(ctx, id, execTrue); return err }, sandbox.ErrNotFound},
		{"Remove of an absent container", func() error { return c.Remove(ctx, id) }, nil},
	}
	for _, tc := range calls {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if err != nil && !strings.Contains(err.Error(), id) {
				t.Errorf("error %q does not name the container", err)
			}
		})
	}
}

func TestListByLabel(t *testing.T) {
	c := dockertest.Client(t)
	ctx := testCtx(t)
	o := createOptions(t)
	running := startContainer(t, c, o)
	created, err := c.Create(ctx, o)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}

	for _, tc := range []struct {
		name   string
		labels map[string]string
		all    bool
		want   []string
	}{
		{"running only", o.Labels, false, []string{running}},
		{"all", o.Labels, true, []string{created, running}},
		{"key present", map[string]string{sandbox.LabelTest: "", "io.sandtray.absent": ""}, true, nil},
		{"other value", map[string]string{sandbox.LabelTest: "someone-else"}, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctrs, err := c.List(ctx, tc.labels, tc.all)
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			var got []string
			for _, ctr := range ctrs {
				got = append(got, ctr.ID)
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tc.want))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("List(%v, all=%v) ids (-want +got):\n%s", tc.labels, tc.all, diff)
			}
		})
	}
}
