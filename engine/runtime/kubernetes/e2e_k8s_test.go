//go:build k8s

package kubernetes_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// These tests run Sandtray itself (`sandtray serve`, built here without
// cgo, and its shim sandtray-mcp) with runtime.name = "kubernetes" against
// the cluster SANDTRAY_K8S_KUBECONFIG names (make test-k8s starts one), and
// talk to it through the MCP socket as a client does.

// kubeconfig is the cluster's; without it the test is skipped, or fails
// when SANDTRAY_REQUIRE_K8S is set.
func kubeconfig(t *testing.T) string {
	t.Helper()
	path := os.Getenv("SANDTRAY_K8S_KUBECONFIG")
	if path == "" {
		if os.Getenv("SANDTRAY_REQUIRE_K8S") != "" {
			t.Fatal("SANDTRAY_REQUIRE_K8S is set but SANDTRAY_K8S_KUBECONFIG is not: give the cluster's kubeconfig")
		}
		t.Skip("no cluster: SANDTRAY_K8S_KUBECONFIG is not set (make test-k8s starts one)")
	}
	return path
}

func clientset(t *testing.T, path string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestMain removes the binaries the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binaries builds sandtray and sandtray-mcp once per test process.
func binaries(t *testing.T) (engine, shim string) {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "sandtray-k8s-bin-")
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", binDir+"/", "../../../app/cmd/sandtray", "../../../app/cmd/sandtray-mcp")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, "sandtray"), filepath.Join(binDir, "sandtray-mcp")
}

// testImage is the sandbox image, imported into the node by up.sh.
func testImage() string {
	if img := os.Getenv("SANDTRAY_TEST_IMAGE"); img != "" {
		return img
	}
	return "sandtray/sandbox:latest"
}

// world is one Sandtray engine on the cluster, in a namespace of its own.
type world struct {
	t       *testing.T
	cs      kubernetes.Interface
	ns      string
	env     []string
	root    string // an allowed root for copies
	shim    string
	engine  *exec.Cmd
	exited  chan struct{} // closed when the engine has exited
	stopped bool
}

// start runs `sandtray serve` on a private socket with runtime.name =
// "kubernetes", the sandboxes in a new namespace, and extra config lines.
func start(t *testing.T, extra string) *world { return startOn(t, "kubernetes", "1000:1000", extra) }

// startOn is start with runtime.name = rt: "kubernetes", or "docker" for
// the same figures on the machine's Docker (its sandboxes carry a test
// label of their own, and go with the engine), and sandbox.user = user.
func startOn(t *testing.T, rt, user, extra string) *world {
	t.Helper()
	kc := kubeconfig(t)
	engine, shim := binaries(t)
	w := &world{t: t, cs: clientset(t, kc), ns: "sandtray-e2e-" + sandbox.RandomHex(4), shim: shim}
	home := t.TempDir()
	w.root = filepath.Join(home, "share")
	cfgDir := filepath.Join(home, ".config", "sandtray")
	runDir := filepath.Join(home, "run")
	for _, d := range []string{w.root, cfgDir, runDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fmt.Sprintf(`default_image = %q
[host]
allowed_roots = [%q]
[pool]
size = 0
[sandbox]
user = %q
[limits]
memory_mb = 256
[runtime]
name = %q
[kubernetes]
kubeconfig = %q
namespace = %q
%s`, testImage(), w.root, user, rt, kc, w.ns, extra)
	if err := os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	w.env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".state"), "XDG_RUNTIME_DIR="+runDir,
		"SANDTRAY_SOCKET="+filepath.Join(runDir, "mcp.sock"), "DISPLAY=", "WAYLAND_DISPLAY=",
		"SANDTRAY_TEST_LABEL=k8s-e2e-"+w.ns)
	w.engine = exec.Command(engine, "serve")
	w.engine.Env = w.env
	log, err := os.Create(filepath.Join(home, "engine.log"))
	if err != nil {
		t.Fatal(err)
	}
	w.engine.Stdout, w.engine.Stderr = log, log
	if err := w.engine.Start(); err != nil {
		t.Fatal(err)
	}
	w.exited = make(chan struct{})
	go func() { _ = w.engine.Wait(); close(w.exited) }()
	t.Cleanup(func() {
		w.stop()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("the engine's log:\n%s", tail(string(b), 60))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		one := int64(0)
		_ = w.cs.CoreV1().Namespaces().Delete(ctx, w.ns, metav1.DeleteOptions{GracePeriodSeconds: &one})
	})
	// The shim starts an engine of its own when none answers: wait for
	// this one's socket first.
	sock := filepath.Join(runDir, "mcp.sock")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if conn, err := net.Dial("unix", sock); err == nil {
			conn.Close()
			break
		}
		select {
		case <-w.exited:
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("sandtray serve exited at its start:\n%s", b)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("sandtray serve did not listen on %s within a minute", sock)
		}
	}
	return w
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// stop ends the engine as a logout would (SIGTERM: it removes its
// ephemeral sandboxes) and waits for it.
func (w *world) stop() {
	if w.stopped {
		return
	}
	w.stopped = true
	_ = w.engine.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.exited:
	case <-time.After(90 * time.Second):
		w.t.Error("the engine did not exit within 90 s of SIGTERM")
		_ = w.engine.Process.Kill()
		<-w.exited
	}
}

// client connects through the shim, as an MCP client does.
func (w *world) client(name string) *client {
	w.t.Helper()
	cmd := exec.Command(w.shim)
	cmd.Env, cmd.Dir = w.env, "/"
	cl := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1.0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		w.t.Fatalf("connect through the shim: %v", err)
	}
	w.t.Cleanup(func() { s.Close() })
	return &client{t: w.t, s: s}
}

type client struct {
	t *testing.T
	s *mcp.ClientSession
}

func (c *client) try(name string, args map[string]any) (map[string]any, *mcp.CallToolResult) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := c.s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("%s: %v", name, err)
	}
	var out map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &out)
	return out, res
}

func (c *client) call(name string, args map[string]any) map[string]any {
	c.t.Helper()
	out, res := c.try(name, args)
	if res.IsError {
		c.t.Fatalf("%s(%.200v): tool error %s", name, args, text(res))
	}
	return out
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// pods lists what is in the world's namespace: Pods and NetworkPolicies.
func (w *world) left(ctx context.Context) (pods, policies []string) {
	p, err := w.cs.CoreV1().Pods(w.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	for _, x := range p.Items {
		pods = append(pods, x.Name+" ("+string(x.Status.Phase)+")")
	}
	np, err := w.cs.NetworkingV1().NetworkPolicies(w.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	for _, x := range np.Items {
		policies = append(policies, x.Name)
	}
	return pods, policies
}

// TestSeedFlowOnKubernetes is the acceptance flow with runtime =
// "kubernetes", through the MCP socket: create, write, run, read, list,
// a persistent Python kernel, a background job, a port exposed to the host,
// the limits (memory, pids, timeout), the hardening in the Pod's spec, and
// nothing left in the namespace after delete and after the engine exits.
func TestSeedFlowOnKubernetes(t *testing.T) {
	w := start(t, "")
	c := w.client("k8s-flow")
	ctx := context.Background()

	t0 := time.Now()
	made := c.call("create_sandbox", map[string]any{"name": "flow"})
	id := made["sandbox_id"].(string)
	t.Logf("create_sandbox: %v", time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()
	if out := c.call("execute_code", map[string]any{"sandbox_id": id, "code": "print(2**10)"}); out["stdout"] != "1024\n" {
		t.Errorf("python: %v", out)
	}
	t.Logf("first execute_code: %v", time.Since(t0).Round(time.Millisecond))

	t.Run("hardening in the Pod spec", func(t *testing.T) {
		pod, err := w.cs.CoreV1().Pods(w.ns).Get(ctx, id, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("sandbox %s is no Pod in %s: %v", id, w.ns, err)
		}
		ps, ct := pod.Spec.SecurityContext, pod.Spec.Containers[0]
		sc := ct.SecurityContext
		for what, ok := range map[string]bool{
			"runAsNonRoot, uid 1000":               ps.RunAsNonRoot != nil && *ps.RunAsNonRoot && ps.RunAsUser != nil && *ps.RunAsUser == 1000,
			"seccomp RuntimeDefault":               ps.SeccompProfile != nil && ps.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault,
			"capabilities drop ALL":                sc.Capabilities != nil && len(sc.Capabilities.Drop) == 1 && sc.Capabilities.Drop[0] == "ALL",
			"allowPrivilegeEscalation false":       sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation,
			"automountServiceAccountToken false":   pod.Spec.AutomountServiceAccountToken != nil && !*pod.Spec.AutomountServiceAccountToken,
			"a 256Mi memory limit":                 ct.Resources.Limits.Memory().String() == "256Mi",
			"a CPU limit":                          !ct.Resources.Limits.Cpu().IsZero(),
			"an ephemeral-storage limit":           !ct.Resources.Limits.StorageEphemeral().IsZero(),
			"restartPolicy Never":                  pod.Spec.RestartPolicy == corev1.RestartPolicyNever,
			"the engine's label":                   pod.Labels[sandbox.LabelEngine] != "" && pod.Labels[sandbox.LabelManaged] == "true",
			"the sandbox's name in its annotation": pod.Annotations[sandbox.LabelName] == "flow",
		} {
			if !ok {
				t.Errorf("the Pod lacks %s", what)
			}
		}
		if _, err := w.cs.NetworkingV1().NetworkPolicies(w.ns).Get(ctx, id, metav1.GetOptions{}); err != nil {
			t.Errorf("no deny-all NetworkPolicy beside the Pod: %v", err)
		}
		out := c.call("execute_command", map[string]any{"sandbox_id": id, "command": "id -u; grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status; test -e /var/run/secrets/kubernetes.io && echo TOKEN"})
		for _, want := range []string{"1000\n", "CapEff:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2"} {
			if !strings.Contains(out["stdout"].(string), want) {
				t.Errorf("inside the sandbox, no %q in:\n%s", want, out["stdout"])
			}
		}
		if strings.Contains(out["stdout"].(string), "TOKEN") {
			t.Error("a service-account token is mounted in the sandbox")
		}
		if out := c.call("execute_command", map[string]any{"sandbox_id": id, "command": "echo x > /.sandtray/sandtray-agent"}); out["exit_code"] == float64(0) {
			t.Error("the sandbox's user can overwrite the agent")
		}
	})

	t.Run("files", func(t *testing.T) {
		c.call("make_directory", map[string]any{"sandbox_id": id, "path": "project"})
		c.call("write_file", map[string]any{"sandbox_id": id, "path": "project/main.py", "content": "print('hello from main.py')\n"})
		if out := c.call("execute_command", map[string]any{"sandbox_id": id, "command": "cd project && python3 main.py"}); out["stdout"] != "hello from main.py\n" {
			t.Errorf("run main.py: %v", out)
		}
		if out := c.call("read_file", map[string]any{"sandbox_id": id, "path": "project/main.py"}); out["content"] != "print('hello from main.py')\n" {
			t.Errorf("read_file: %v", out)
		}
		if _, res := c.try("list_files", map[string]any{"sandbox_id": id, "depth": 2}); !strings.Contains(text(res), "main.py") {
			t.Errorf("list_files: %s", text(res))
		}
		if err := os.WriteFile(filepath.Join(w.root, "in.csv"), []byte("a,b\n1,2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		c.call("copy_to_sandbox", map[string]any{"sandbox_id": id, "host_path": filepath.Join(w.root, "in.csv"), "path": "project/data.csv"})
		c.call("copy_from_sandbox", map[string]any{"sandbox_id": id, "path": "project", "host_path": filepath.Join(w.root, "out")})
		if b, err := os.ReadFile(filepath.Join(w.root, "out", "data.csv")); err != nil || string(b) != "a,b\n1,2\n" {
			t.Errorf("a file's round trip through the sandbox: %q, %v", b, err)
		}
	})

	t.Run("list", func(t *testing.T) {
		out := c.call("list_sandboxes", map[string]any{})
		b, _ := json.Marshal(out)
		if !strings.Contains(string(b), `"flow"`) || !strings.Contains(string(b), "running") {
			t.Errorf("list_sandboxes does not show flow running: %s", b)
		}
	})

	t.Run("python kernel keeps state", func(t *testing.T) {
		c.call("execute_code", map[string]any{"sandbox_id": id, "code": "x = 41"})
		if out := c.call("execute_code", map[string]any{"sandbox_id": id, "code": "print(x + 1)"}); out["stdout"] != "42\n" {
			t.Errorf("the kernel forgot x: %v", out)
		}
	})

	t.Run("background job", func(t *testing.T) {
		out := c.call("execute_command", map[string]any{"sandbox_id": id, "command": "sleep 1; echo job done", "background": true})
		job, _ := out["job_id"].(string)
		if job == "" {
			t.Fatalf("no job_id: %v", out)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			st := c.call("job_status", map[string]any{"job_id": job})
			if st["status"] != "running" {
				b, _ := json.Marshal(st)
				if !strings.Contains(string(b), "job done") || st["exit_code"] != float64(0) {
					t.Errorf("the job ended as %s", b)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the job still runs after 30 s: %v", st)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})

	t.Run("expose_port", func(t *testing.T) {
		c.call("execute_command", map[string]any{"sandbox_id": id, "command": "cd /tmp && echo served > index.html && python3 -m http.server 8000", "background": true})
		var url string
		for i := 0; ; i++ {
			out, res := c.try("expose_port", map[string]any{"sandbox_id": id, "port": 8000})
			if !res.IsError {
				url = out["url"].(string)
				break
			}
			if i > 50 {
				t.Fatalf("expose_port: %s", text(res))
			}
			time.Sleep(200 * time.Millisecond)
		}
		var body []byte
		for i := 0; ; i++ {
			resp, err := http.Get(url + "index.html")
			if err == nil {
				body, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 {
					break
				}
			}
			if i > 50 {
				t.Fatalf("GET %s: %v, %q", url, err, body)
			}
			time.Sleep(200 * time.Millisecond)
		}
		if string(body) != "served\n" {
			t.Errorf("the server in the Pod answered %q", body)
		}
	})

	t.Run("limits hold", func(t *testing.T) {
		out := c.call("execute_command", map[string]any{"sandbox_id": id, "command": "sleep 100", "timeout_s": 1})
		if out["timed_out"] != true {
			t.Errorf("a command past its timeout: %v", out)
		}
		out = c.call("execute_command", map[string]any{"sandbox_id": id, "timeout_s": 60,
			"command": `python3 -c 'b = bytearray(600 << 20); print("allocated")'`})
		if out["exit_code"] == float64(0) || strings.Contains(fmt.Sprint(out["stdout"]), "allocated") {
			t.Errorf("600 MB in a 256 MB sandbox: %v", out)
		}
		out = c.call("execute_command", map[string]any{"sandbox_id": id, "timeout_s": 60,
			"command": `python3 -c '
import subprocess
ps = []
try:
    for i in range(2000):
        ps.append(subprocess.Popen(["sleep", "30"]))
    print("started", len(ps))
except OSError as e:
    print("refused after", len(ps), e.errno)
for p in ps:
    p.kill()
'`})
		if s := fmt.Sprint(out["stdout"]); !strings.Contains(s, "refused after") {
			t.Errorf("2000 processes in a Pod the node limits to its podPidsLimit: %v", out)
		}
		if out := c.call("execute_code", map[string]any{"sandbox_id": id, "code": "print('still here')"}); out["stdout"] != "still here\n" {
			t.Errorf("after the limits: %v", out)
		}
	})

	t.Run("delete leaves nothing", func(t *testing.T) {
		c.call("delete_sandbox", map[string]any{"sandbox_id": id})
		pods, policies := w.left(ctx)
		if len(pods) != 0 || len(policies) != 0 {
			t.Errorf("after delete_sandbox the namespace holds Pods %q and policies %q", pods, policies)
		}
	})

	t.Run("the engine's exit leaves nothing", func(t *testing.T) {
		def := c.call("execute_code", map[string]any{"code": "print('default')"})
		if def["stdout"] != "default\n" {
			t.Errorf("the session's default sandbox: %v", def)
		}
		if pods, _ := w.left(ctx); len(pods) != 1 {
			t.Errorf("with the default sandbox up, the namespace holds %q", pods)
		}
		w.stop()
		pods, policies := w.left(ctx)
		if len(pods) != 0 || len(policies) != 0 {
			t.Errorf("after the engine exited the namespace holds Pods %q and policies %q", pods, policies)
		}
	})
}

// TestEgressAndInstallOnKubernetes: a sandbox of network "egress" fetches
// an allowed host through the engine's egress gate (its channel is inside
// the agent's session: the Pod's NetworkPolicy denies all), cannot connect
// out past it, and installs a package with apt. The install runs as root,
// which a Pod whose user is not cannot do: this engine's sandboxes run as
// the image's user (root, with no capabilities).
func TestEgressAndInstallOnKubernetes(t *testing.T) {
	w := startOn(t, "kubernetes", "", "")
	c := w.client("k8s-egress")
	gated := c.call("create_sandbox", map[string]any{"name": "gated", "network": "egress"})["sandbox_id"].(string)
	defer c.call("delete_sandbox", map[string]any{"sandbox_id": gated})
	const fetch = `import urllib.request; r = urllib.request.urlopen("http://deb.debian.org/debian/dists/bookworm/Release", timeout=60); print(r.status, r.read(100).decode().splitlines()[0])`
	out := c.call("execute_code", map[string]any{"sandbox_id": gated, "code": fetch, "timeout_s": 90})
	if !strings.HasPrefix(fmt.Sprint(out["stdout"]), "200 Origin: Debian") {
		t.Errorf("a fetch of an allowed host through the gate: %v", out)
	}
	out, res := c.try("install_packages", map[string]any{"sandbox_id": gated, "packages": []string{"sl"}, "timeout_s": 240})
	if res.IsError {
		t.Errorf("install_packages sl: %s", text(res))
	} else if got := c.call("execute_command", map[string]any{"sandbox_id": gated, "command": "test -x /usr/games/sl && echo installed"}); got["stdout"] != "installed\n" {
		t.Errorf("sl after its install: %v (install said %v)", got, out)
	}
	if out := c.call("execute_code", map[string]any{"sandbox_id": gated, "timeout_s": 30,
		"code": `import socket; s = socket.socket(); s.settimeout(5)
try:
    s.connect(("93.184.215.14", 80)); print("direct connection made")
except OSError as e:
    print("no direct route:", e)`}); strings.Contains(fmt.Sprint(out["stdout"]), "direct connection made") {
		t.Errorf("an egress sandbox connected out past the gate: %v", out)
	}
}

// TestTimings measures, through the MCP socket, a warm execute_code
// (print(1) in a running sandbox) and a new sandbox's first result
// (create_sandbox then execute_code, no warm pool), on the cluster and,
// beside it, on this machine's Docker: the figures of docs/kubernetes.md.
// Run by hand (it only logs):
//
//	SANDTRAY_K8S_TIMINGS=1 make test-k8s
//
// or, with the node up (make k8s-up):
//
//	SANDTRAY_K8S_TIMINGS=1 SANDTRAY_K8S_KUBECONFIG=/var/tmp/sandtray-k8s/kubeconfig \
//	  go test -tags k8s -count=1 -run TestTimings -v ./engine/runtime/kubernetes/
func TestTimings(t *testing.T) {
	if os.Getenv("SANDTRAY_K8S_TIMINGS") == "" {
		t.Skip("set SANDTRAY_K8S_TIMINGS=1 to measure")
	}
	for _, rt := range []string{"docker", "kubernetes"} {
		t.Run(rt, func(t *testing.T) {
			w := startOn(t, rt, "", "")
			c := w.client("k8s-timings")
			id := c.call("create_sandbox", map[string]any{"name": "timing"})["sandbox_id"].(string)
			c.call("execute_code", map[string]any{"sandbox_id": id, "code": "print(1)"})
			var warm []time.Duration
			for range 50 {
				t0 := time.Now()
				if out := c.call("execute_code", map[string]any{"sandbox_id": id, "code": "print(1)"}); out["stdout"] != "1\n" {
					t.Fatalf("print(1): %v", out)
				}
				warm = append(warm, time.Since(t0))
			}
			var first []time.Duration
			for i := range 5 {
				t0 := time.Now()
				nid := c.call("create_sandbox", map[string]any{"name": fmt.Sprintf("first-%d", i)})["sandbox_id"].(string)
				if out := c.call("execute_code", map[string]any{"sandbox_id": nid, "code": "print(1)"}); out["stdout"] != "1\n" {
					t.Fatalf("print(1): %v", out)
				}
				first = append(first, time.Since(t0))
				c.call("delete_sandbox", map[string]any{"sandbox_id": nid})
			}
			t.Logf("%s: warm execute_code median %v (min %v, max %v over %d); new sandbox to first result median %v (%v)",
				rt, median(warm), slices.Min(warm), slices.Max(warm), len(warm), median(first), first)
		})
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
