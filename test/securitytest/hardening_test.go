package securitytest

import (
	"github.com/sandtray/sandtray/engine/runtime"

	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"
)

// TestLimitBounds (F8): a limit so small that Docker reads it as "no limit"
// (cpus 1e-10 became NanoCpus 0) is refused with the range to use, and every
// sandbox the engine makes has a CPU, memory and pids limit.
func TestLimitBounds(t *testing.T) {
	e := newEnv(t)
	for _, cpus := range []float64{1e-10, 0.001} {
		e.client.refused(t, "create_sandbox", map[string]any{"cpus": cpus}, "cpus", "limits.min_cpus")
	}
	e.client.refused(t, "create_sandbox", map[string]any{"memory_mb": 8}, "memory_mb", "16")
	id := e.client.sandbox(t, map[string]any{"cpus": 0.01})
	doc := cisDoc{e.inspect(t, id)}
	if doc.num("HostConfig.NanoCpus") != 1e7 || doc.num("HostConfig.Memory") <= 0 || doc.num("HostConfig.PidsLimit") <= 0 {
		t.Errorf("a sandbox at the lowest CPU limit: NanoCpus %v, Memory %v, PidsLimit %v; want 1e7 and both limits set",
			doc.num("HostConfig.NanoCpus"), doc.num("HostConfig.Memory"), doc.num("HostConfig.PidsLimit"))
	}
}

// buildImage builds a small image on the test image from the Dockerfile
// lines and removes it when the test ends.
func (e *env) buildImage(t *testing.T, lines ...string) string {
	t.Helper()
	tag := "sandtray-securitytest/" + strings.ToLower(strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())) + ":" + randomName()
	dockerfile := "FROM " + e.cfg.DefaultImage + "\n" + strings.Join(lines, "\n") + "\n"
	var ctxTar bytes.Buffer
	tw := tar.NewWriter(&ctxTar)
	_ = tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(dockerfile))})
	_, _ = tw.Write([]byte(dockerfile))
	_ = tw.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := e.docker.BuildImage(ctx, &ctxTar, tag, nil); err != nil {
		t.Fatalf("build %s: %v", tag, err)
	}
	e.removeLater(tag) // after the engine and its containers, which may use it
	return tag
}

// TestImageRunsNothingOutsideCalls (F9): an image's HEALTHCHECK never runs
// in a sandbox, and its VOLUMEs never become Docker volumes (which would lie
// outside the disk limit and the writable layer that diff and export read):
// each is a small tmpfs instead, counted in the memory limit.
func TestImageRunsNothingOutsideCalls(t *testing.T) {
	e := newEnv(t)
	image := e.buildImage(t, "VOLUME /data", "HEALTHCHECK --interval=1s --start-period=1s CMD touch /tmp/healthcheck-ran")
	id := e.client.sandbox(t, map[string]any{"image": image})
	// A control container of the same image, started after the sandbox and
	// outside Sandtray, keeps the image's health check: once Docker reports
	// it healthy, the check has run there, so it would have run in the
	// sandbox, which has lived longer, had it been kept.
	control := dockerCLI(t, "run", "-d", "--label", "sandtray-securitytest=control", "--network", "none", image, "sleep", "infinity")
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", control).Run() })
	eventually(t, 30*time.Second, "the control container's health check ran", func() bool {
		out, _ := exec.Command("docker", "inspect", "--format", "{{.State.Health.Status}}", control).Output()
		return strings.TrimSpace(string(out)) == "healthy"
	})
	if out := dockerCLI(t, "exec", control, "ls", "/tmp/healthcheck-ran"); !strings.Contains(out, "healthcheck-ran") {
		t.Fatalf("the control container is healthy but its check left no file: %q", out)
	}
	if out := e.client.command(t, id, `ls /tmp/healthcheck-ran 2>&1`, 10); !strings.Contains(out.stdout, "No such file") {
		t.Errorf("the image's health check ran inside the sandbox: %q", out.stdout)
	}
	if out := e.client.command(t, id, `grep '^tmpfs /data ' /proc/mounts`, 10); out.code != 0 {
		t.Errorf("the image's VOLUME /data is not a tmpfs: %v", out.result)
	}
	doc := cisDoc{e.inspect(t, id)}
	for _, m := range doc.list("Mounts") {
		if mm, _ := m.(map[string]any); mm["Type"] == "volume" && mm["Destination"] != runtime.AgentDir {
			t.Errorf("the image's VOLUME became a Docker volume: %v", mm)
		}
	}
	if test := doc.strings("Config.Healthcheck.Test"); !slices.Equal(test, []string{"NONE"}) {
		t.Errorf("Config.Healthcheck.Test = %v, want [NONE]", test)
	}
	if doc.get("State.Health") != nil {
		t.Errorf("State.Health = %v, want none (no health check)", doc.get("State.Health"))
	}
}

// TestBridgedSandboxesAreApart (F10): sandboxes given the network are on
// Sandtray's own bridge, where one cannot reach another: a server in one
// sandbox is out of reach of the other, while each still reaches the outside.
func TestBridgedSandboxesAreApart(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.Sandbox.AllowNetwork = true })
	server := e.client.sandbox(t, map[string]any{"network": "bridge"})
	other := e.client.sandbox(t, map[string]any{"network": "bridge"})
	for _, id := range []string{server, other} {
		nets := cisDoc{e.inspect(t, id)}.get("NetworkSettings.Networks")
		m, _ := nets.(map[string]any)
		if _, ok := m["bridge"]; ok || len(m) != 1 {
			t.Errorf("sandbox %s networks: %v, want exactly Sandtray's own, not Docker's default bridge", id, keysOf(m))
		}
	}
	e.client.ok(t, "execute_command", map[string]any{"sandbox_id": server, "background": true,
		"command": "python3 -m http.server 8000"})
	addr := strings.TrimSpace(e.client.command(t, server, `hostname -I | cut -d' ' -f1`, 10).stdout)
	e.client.command(t, server, `for i in $(seq 50); do python3 -c "import urllib.request;urllib.request.urlopen('http://127.0.0.1:8000',timeout=1)" 2>/dev/null && exit 0; sleep 0.1; done; exit 1`, 20)
	probe := fmt.Sprintf(`python3 -c "import urllib.request;print(urllib.request.urlopen('http://%s:8000',timeout=3).status)"`, addr)
	if out := e.client.command(t, other, probe, 20); out.code == 0 {
		t.Errorf("a sandbox reached another sandbox's server at %s:8000: %v", addr, out.result)
	}
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestSwappedWorkdir (F11): replacing the workdir with a symlink (to
// /proc/self/fd/N, the path of runc's CVE-2024-21626) never reaches runc:
// Docker runs every exec in "/" and the cd happens inside, so the sandbox
// keeps running commands, and says why it could not enter its workdir.
func TestSwappedWorkdir(t *testing.T) {
	e := newEnv(t)
	id := e.client.sandbox(t, nil)
	e.client.command(t, id, `cd / && rm -rf /workspace && ln -s /proc/self/fd/7 /workspace`, 10)
	r := e.client.call(t, "execute_command", map[string]any{"sandbox_id": id, "command": "echo alive", "workdir": "/"})
	if r.err != nil || r.isError || !strings.Contains(r.str("stdout"), "alive") {
		t.Fatalf("after /workspace became a symlink to /proc/self/fd/7, the sandbox runs nothing: %v", r)
	}
	out := execOf(e.client.call(t, "execute_command", map[string]any{"sandbox_id": id, "command": "pwd"}))
	if out.err != nil || out.isError || !strings.Contains(out.stderr, "/workspace") {
		t.Errorf("a command in the broken workdir: want a note naming /workspace on stderr, got %v", out.result)
	}
}

// TestNamedUserIsResolvedOnce (F12): a sandbox.user given by name runs as
// the ids the name had when the sandbox was made, so root code that rewrites
// /etc/passwd (an install, which runs as root) cannot map the name to uid 0
// for later calls; and a name that means uid 0 is refused. write_file
// itself writes as the sandbox's user, who may not write /etc/passwd.
func TestNamedUserIsResolvedOnce(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.Sandbox.User = "nobody" })
	id := e.client.sandbox(t, nil)
	e.client.refused(t, "write_file", map[string]any{"sandbox_id": id, "path": "/etc/passwd", "content": "x"}, "permission denied")
	e.execAs(t, id, "0", "sh", "-c", `printf 'root:x:0:0:root:/root:/bin/bash\nnobody:x:0:0:nobody:/nonexistent:/bin/sh\n' > /etc/passwd`)
	if out := e.client.command(t, id, "id -u", 10); strings.TrimSpace(out.stdout) != "65534" {
		t.Errorf("after /etc/passwd mapped nobody to uid 0, commands run as uid %q, want 65534", strings.TrimSpace(out.stdout))
	}
	// An image in which another name is uid 0.
	alias := e.buildImage(t, `RUN echo 'toor:x:0:0:root:/root:/bin/sh' >> /etc/passwd`)
	root := newEnv(t, func(c *config.Config) { c.Sandbox.User = "toor"; c.Pool.Size = 0 })
	root.client.refused(t, "create_sandbox", map[string]any{"image": alias}, "sandbox.user", "uid 0")
}
