package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandtray/sandtray/test/dockertest"
)

// httpServe is `sandtray serve --http 127.0.0.1:0` running for one test.
type httpServe struct {
	url   string // the Streamable HTTP URL the log printed
	env   []string
	root  string // the allowed host root
	token string
}

var urlInLog = regexp.MustCompile(`msg="serving MCP over HTTP" url=(\S+)`)

// serveHTTPBinary starts the real binary with MCP over HTTP on a free
// loopback port and waits for the URL in its log.
func serveHTTPBinary(t *testing.T, image string) *httpServe {
	t.Helper()
	env, root := userEnv(t, image)
	env = append(env, "SANDTRAY_SOCKET="+privateSocket(t))
	cmd := exec.Command(binary, "serve", "--http", "127.0.0.1:0")
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found, exited := make(chan string, 1), make(chan struct{})
	var logMu sync.Mutex
	var log bytes.Buffer
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logMu.Lock()
			log.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if m := urlInLog.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		if t.Failed() {
			logMu.Lock()
			t.Logf("server log:\n%s", log.String())
			logMu.Unlock()
		}
	})
	hs := &httpServe{env: env, root: root}
	select {
	case hs.url = <-found:
	case <-exited:
		t.Fatal("serve --http exited before printing its URL")
	case <-time.After(60 * time.Second):
		t.Fatal("serve --http printed no URL")
	}
	tok, err := runWithEnv(env, binary, "token")
	if err != nil {
		t.Fatalf("sandtray token: %v", err)
	}
	hs.token = tok
	return hs
}

// privateSocket is a socket path in a directory of mode 0700, as the
// socket's owner check wants.
func privateSocket(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "mcp.sock")
}

func runWithEnv(env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

type authTransport struct{ token string }

func (a authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+a.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens a go-sdk session over Streamable HTTP, or over the legacy
// SSE transport when sse is set.
func (hs *httpServe) connect(t *testing.T, name, protocol string, sse bool) (*client, error) {
	t.Helper()
	hc := &http.Client{Transport: authTransport{hs.token}}
	var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: hs.url, HTTPClient: hc, MaxRetries: -1}
	if sse {
		tr = &mcp.SSEClientTransport{Endpoint: strings.TrimSuffix(hs.url, "/mcp") + "/sse", HTTPClient: hc}
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1.0"}, nil)
	// The legacy SSE stream lives as long as Connect's context: the test's.
	s, err := cl.Connect(t.Context(), tr, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		return nil, err
	}
	c := &client{t: t, s: s, ids: map[string]bool{}}
	t.Cleanup(func() {
		s.Close()
		for id := range c.ids {
			exec.Command("docker", "rm", "-f", id).Run()
		}
	})
	return c, nil
}

func (hs *httpServe) mustConnect(t *testing.T, name, protocol string, sse bool) *client {
	t.Helper()
	c, err := hs.connect(t, name, protocol, sse)
	if err != nil {
		t.Fatalf("%s: connect over HTTP: %v", name, err)
	}
	return c
}

// TestHTTPUserFlow is the seed flow over HTTP, as a web-based client would
// run it, on both current protocol versions over Streamable HTTP and on the
// legacy SSE transport: create, run Python and bash, write, read, list, copy
// both ways, refuse bad input, time out, stop and delete; a call without
// sandbox_id gets the session's default sandbox.
func TestHTTPUserFlow(t *testing.T) {
	image := dockertest.Image(t)
	hs := serveHTTPBinary(t, image)
	transports := []struct {
		name, protocol string
		sse            bool
	}{
		{"streamable-2026-07-28", "2026-07-28", false},
		{"streamable-2025-11-25", "2025-11-25", false},
		{"sse", "2024-11-05", true},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c := hs.mustConnect(t, "flow-"+tr.name, tr.protocol, tr.sse)
			if got := c.s.InitializeResult().ProtocolVersion; got != tr.protocol {
				t.Errorf("negotiated %s, want %s", got, tr.protocol)
			}
			name := fmt.Sprintf("flow-%s-%d", tr.name, os.Getpid()) // sandbox names are the daemon's
			id := c.call("create_sandbox", map[string]any{"name": name})["sandbox_id"].(string)
			for _, r := range []struct{ lang, code, want string }{
				{"python", "print(2**10)", "1024\n"},
				{"bash", "echo $((6*7))", "42\n"},
			} {
				out := c.call("execute_code", map[string]any{"sandbox_id": name, "language": r.lang, "code": r.code})
				if out["stdout"] != r.want || out["exit_code"] != float64(0) {
					t.Errorf("%s: %v", r.lang, out)
				}
			}
			fileFlow(t, c, id, hs.root, name)
			for _, b := range []struct {
				tool string
				args map[string]any
			}{
				{"execute_code", map[string]any{"sandbox_id": "nope", "code": "1"}},
				{"execute_code", map[string]any{"sandbox_id": id, "language": "cobol", "code": "1"}},
				{"copy_to_sandbox", map[string]any{"sandbox_id": id, "host_path": "/etc/passwd"}},
			} {
				if res := c.try(b.tool, b.args); !res.IsError {
					t.Errorf("%s(%v) should be a tool error, got %s", b.tool, b.args, text(res))
				}
			}
			if out := c.call("execute_command", map[string]any{"sandbox_id": id, "command": "sleep 100", "timeout_s": 1}); out["timed_out"] != true {
				t.Errorf("a command that never ends: %v", out)
			}
			c.call("stop_sandbox", map[string]any{"sandbox_id": id})
			c.call("delete_sandbox", map[string]any{"sandbox_id": id})
			if containerExists(id) {
				t.Error("delete_sandbox left the container")
			}
			first := c.call("execute_code", map[string]any{"code": "x = 41"})["sandbox_id"]
			again := c.call("execute_code", map[string]any{"code": "print(x + 1)"})
			if again["sandbox_id"] != first || again["stdout"] != "42\n" {
				t.Errorf("the session's default sandbox did not carry over: %v then %v", first, again)
			}
		})
	}
}

// TestHTTPSessionsShareASandboxAndLimits: two concurrent HTTP sessions (one
// per transport) work in one sandbox at once; a 100 MB request is refused
// with a tool error and its session goes on; a request without the token or
// with a foreign Origin is refused.
func TestHTTPSessionsShareASandboxAndLimits(t *testing.T) {
	image := dockertest.Image(t)
	hs := serveHTTPBinary(t, image)
	a := hs.mustConnect(t, "alice", "2025-11-25", false)
	b := hs.mustConnect(t, "bob", "2024-11-05", true)
	id := a.call("create_sandbox", map[string]any{"name": "shared"})["sandbox_id"].(string)
	var wg sync.WaitGroup
	for i, c := range []*client{a, b} {
		wg.Go(func() {
			for j := range 3 {
				path := fmt.Sprintf("from-%d-%d", i, j)
				c.call("write_file", map[string]any{"sandbox_id": "shared", "path": path, "content": path})
			}
		})
	}
	wg.Wait()
	if out := b.call("execute_command", map[string]any{"sandbox_id": id, "command": "ls from-* | wc -l"}); out["stdout"] != "6\n" {
		t.Errorf("the two sessions' files in the shared sandbox: %v", out)
	}

	res := a.try("write_file", map[string]any{"sandbox_id": id, "path": "big", "content": strings.Repeat("x", 100<<20)})
	if !res.IsError || !strings.Contains(text(res), "over the limit") {
		t.Errorf("a 100 MB request: %s", text(res))
	}
	if out := a.call("execute_command", map[string]any{"sandbox_id": id, "command": "test -e big || echo absent"}); out["stdout"] != "absent\n" {
		t.Errorf("after the refused request: %v", out)
	}

	for _, h := range []map[string]string{
		{},
		{"Authorization": "Bearer not-the-token"},
		{"Authorization": "Bearer " + hs.token, "Origin": "https://evil.example"},
	} {
		req, _ := http.NewRequest(http.MethodPost, hs.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := http.StatusUnauthorized
		if h["Origin"] != "" {
			want = http.StatusForbidden
		}
		if resp.StatusCode != want || len(body) != 0 {
			t.Errorf("headers %v: %d %q, want %d and no body", h, resp.StatusCode, body, want)
		}
	}
}

// TestHTTPTokenRotationEndsSessions: `sandtray token --rotate` while a
// client is connected ends its session; the old token is refused and the
// new one works.
func TestHTTPTokenRotationEndsSessions(t *testing.T) {
	image := dockertest.Image(t)
	hs := serveHTTPBinary(t, image)
	c := hs.mustConnect(t, "rotating", "2025-11-25", false)
	c.call("list_sandboxes", nil)
	fresh, err := runWithEnv(hs.env, binary, "token", "--rotate")
	if err != nil || fresh == hs.token || fresh == "" {
		t.Fatalf("token --rotate: %q, %v", fresh, err)
	}
	eventually(t, 10*time.Second, "the session on the old token still works", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := c.s.CallTool(ctx, &mcp.CallToolParams{Name: "list_sandboxes"})
		return err != nil
	})
	if _, err := hs.connect(t, "old-token", "2025-11-25", false); err == nil {
		t.Error("the old token still connects")
	}
	hs.token = fresh
	hs.mustConnect(t, "new-token", "2025-11-25", false).call("list_sandboxes", nil)
}

// TestServeRefusesANonLoopbackAddressWithoutTLS: the bearer token must not
// cross a network in clear text.
func TestServeRefusesANonLoopbackAddressWithoutTLS(t *testing.T) {
	env, _ := userEnv(t, "sandtray/sandbox:latest")
	env = append(env, "SANDTRAY_SOCKET="+privateSocket(t))
	cmd := exec.Command(binary, "serve", "--http", "0.0.0.0:0")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not a loopback address") || !strings.Contains(string(out), "http.tls_cert") {
		t.Errorf("serve --http 0.0.0.0:0 = %v:\n%s\nwant a refusal saying why", err, out)
	}
}

// rawHTTP is a hand-written JSON-RPC session over Streamable HTTP, for MCP
// tasks, which the go-sdk client (v1.8.0) does not speak.
type rawHTTP struct {
	t       *testing.T
	url     string
	token   string
	session string
	nextID  int
}

func (r *rawHTTP) call(method string, params any) map[string]any {
	r.t.Helper()
	r.nextID++
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": r.nextID, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, r.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+r.token)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if r.session != "" {
		req.Header.Set("Mcp-Session-Id", r.session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		r.session = id
	}
	raw, _ := io.ReadAll(resp.Body)
	if i := bytes.LastIndex(raw, []byte("data: ")); strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") && i >= 0 {
		raw = raw[i+len("data: "):]
	}
	var msg struct {
		Result map[string]any
		Error  map[string]any
	}
	if err := json.Unmarshal(raw, &msg); err != nil || msg.Error != nil {
		r.t.Fatalf("%s: %s (%v)", method, raw, err)
	}
	return msg.Result
}

// TestHTTPTasks: a client that declares the tasks capability runs
// execute_command as a task through to its result, and cancels another,
// which stops its job in the sandbox.
func TestHTTPTasks(t *testing.T) {
	image := dockertest.Image(t)
	hs := serveHTTPBinary(t, image)
	r := &rawHTTP{t: t, url: hs.url, token: hs.token}
	init := r.call("initialize", map[string]any{"protocolVersion": "2025-11-25",
		"capabilities": map[string]any{"tasks": map[string]any{}}, "clientInfo": map[string]any{"name": "tasks-test", "version": "1"}})
	if caps, _ := init["capabilities"].(map[string]any); caps["tasks"] == nil {
		t.Fatalf("the server declares no tasks capability: %v", init["capabilities"])
	}
	id := r.call("tools/call", map[string]any{"name": "create_sandbox", "arguments": map[string]any{"name": "tasks"}})["structuredContent"].(map[string]any)["sandbox_id"].(string)
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", id).Run() })

	start := func(command string) string {
		res := r.call("tools/call", map[string]any{"name": "execute_command", "task": map[string]any{"ttl": 600000},
			"arguments": map[string]any{"sandbox_id": id, "command": command, "timeout_s": 120}})
		task, _ := res["task"].(map[string]any)
		if task == nil || task["taskId"] == "" || task["status"] != "working" {
			t.Fatalf("a task-augmented call should answer with a working task at once, got %v", res)
		}
		return task["taskId"].(string)
	}
	done := start("sleep 2; echo finished; exit 3")
	eventually(t, 60*time.Second, "the task did not complete", func() bool {
		return r.call("tasks/get", map[string]any{"taskId": done})["status"] == "completed"
	})
	result := r.call("tasks/result", map[string]any{"taskId": done})
	out, _ := result["structuredContent"].(map[string]any)
	if out["stdout"] != "finished\n" || out["exit_code"] != float64(3) {
		t.Errorf("the task's result: %v", result)
	}

	// The image has no pgrep: count the task's sleep in /proc.
	const sleepers = `for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' <$f; echo; done 2>/dev/null | grep -c '^sleep 313 $' || true`
	cancelled := start("echo started; sleep 313")
	eventually(t, 30*time.Second, "the task's command never started", func() bool {
		o := r.call("tools/call", map[string]any{"name": "execute_command", "arguments": map[string]any{"sandbox_id": id, "command": sleepers}})
		return o["structuredContent"].(map[string]any)["stdout"] == "1\n"
	})
	r.call("tasks/cancel", map[string]any{"taskId": cancelled})
	if st := r.call("tasks/get", map[string]any{"taskId": cancelled})["status"]; st != "cancelled" {
		t.Errorf("after tasks/cancel the task is %v", st)
	}
	eventually(t, 30*time.Second, "the cancelled task's command is still running", func() bool {
		o := r.call("tools/call", map[string]any{"name": "execute_command", "arguments": map[string]any{"sandbox_id": id, "command": sleepers}})
		return o["structuredContent"].(map[string]any)["stdout"] == "0\n"
	})
}
