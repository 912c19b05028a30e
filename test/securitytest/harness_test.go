package securitytest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sandtray/sandtray/engine/config"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/runtime/docker"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/testwait"
	"github.com/sandtray/sandtray/serve/mcpserver"
	"github.com/sandtray/sandtray/test/dockertest"
)

// callTimeout bounds one tool call; the longest attack (a timed-out exec
// whose group is then killed) ends well within it.
const callTimeout = 90 * time.Second

// env is a real engine on the real daemon, served over MCP to a real client.
// Everything it creates carries the test's label and is removed when the
// test ends.
type env struct {
	t      *testing.T
	eng    *engine.Engine
	srv    *mcpserver.Server
	cfg    config.Config
	docker *docker.Client
	labels map[string]string
	root   string // the one allowed host root
	client *client
	// removeLater removes an image the test made once the engine is
	// closed and its containers are gone (see dockertest.RemoveImagesLater).
	removeLater func(ref string)
}

// newEnv starts an engine (with the test image, a private state dir and a
// temporary allowed root, adjusted by configure), its MCP server, and one
// connected client.
func newEnv(t *testing.T, configure ...func(*config.Config)) *env {
	t.Helper()
	return newEnvWith(t, engine.Options{}, configure...)
}

// newEnvWith is newEnv with the engine's options opts (its labels and tick
// are the harness's).
func newEnvWith(t *testing.T, opts engine.Options, configure ...func(*config.Config)) *env {
	t.Helper()
	removeLater := dockertest.RemoveImagesLater(t) // first: its cleanup runs last
	cli := dockertest.Client(t)
	cfg := config.Default()
	cfg.DefaultImage = dockertest.Image(t)
	cfg.StateDir = t.TempDir()
	cfg.Host.AllowedRoots = []string{t.TempDir()}
	for _, c := range configure {
		c(&cfg)
	}
	labels := dockertest.Labels(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	opts.Labels, opts.Tick = labels, 200*time.Millisecond
	eng, err := engine.New(ctx, cfg, opts)
	if err != nil {
		t.Fatalf("start engine: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := eng.RemoveEphemeral(ctx); err != nil {
			t.Logf("remove ephemeral sandboxes: %v", err)
		}
		if err := eng.Close(ctx); err != nil {
			t.Errorf("close engine: %v", err)
		}
	})
	srv := mcpserver.New(eng, mcpserver.Options{
		Version: "securitytest", MaxRequestBytes: cfg.Limits.MaxRequestBytes,
		Languages: engine.Languages(), LanguageAliases: engine.LanguageAliases(),
	})
	e := &env{t: t, eng: eng, srv: srv, cfg: cfg, docker: cli, labels: labels, root: cfg.Host.AllowedRoots[0], removeLater: removeLater}
	e.client = e.connect(t)
	return e
}

// pipeEnd is one side of an in-memory connection made of two io.Pipes.
type pipeEnd struct {
	*io.PipeReader
	*io.PipeWriter
}

func (p pipeEnd) Close() error {
	p.PipeReader.Close()
	return p.PipeWriter.Close()
}

// client is one MCP session: the go-sdk client over an in-memory pipe, with
// a tap on every raw line the server sent.
type client struct {
	cs     *sdk.ClientSession
	conn   pipeEnd // the client's end
	tap    *tap
	served chan error
	closed sync.Once
}

// connect serves one more connection of e's server and connects a client.
func (e *env) connect(t *testing.T) *client {
	t.Helper()
	return e.connectWith(t, nil)
}

// connectWith is connect with the client's options (handlers for
// notifications, say).
func (e *env) connectWith(t *testing.T, opts *sdk.ClientOptions) *client {
	t.Helper()
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- e.srv.ServeConn(context.Background(), pipeEnd{toServer, fromServer}) }()
	tp := &tap{r: toClient}
	c := &client{conn: pipeEnd{toClient, fromClient}, tap: tp, served: served}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mc := sdk.NewClient(&sdk.Implementation{Name: "securitytest", Version: "1.0"}, opts)
	cs, err := mc.Connect(ctx, &sdk.IOTransport{Reader: readCloser{tp, toClient}, Writer: fromClient}, nil)
	if err != nil {
		t.Fatalf("connect MCP client: %v", err)
	}
	c.cs = cs
	t.Cleanup(func() { c.close(t) })
	return c
}

// close ends the session and waits for the server to let go of it.
func (c *client) close(t *testing.T) {
	c.closed.Do(func() {
		c.cs.Close()
		c.conn.PipeWriter.Close()
		select {
		case <-c.served:
		case <-time.After(60 * time.Second):
			t.Error("ServeConn did not return after the client closed its connection")
		}
	})
}

// readCloser reads through the tap and closes the pipe underneath.
type readCloser struct {
	io.Reader
	c io.Closer
}

func (r readCloser) Close() error { return r.c.Close() }

// tap records every byte the server sent, so tests can check the raw JSON.
type tap struct {
	r   io.Reader
	mu  sync.Mutex
	buf bytes.Buffer
}

func (t *tap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.mu.Lock()
	t.buf.Write(p[:n])
	t.mu.Unlock()
	return n, err
}

// lines returns the raw lines received so far.
func (t *tap) lines() [][]byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return bytes.Split(bytes.TrimRight(bytes.Clone(t.buf.Bytes()), "\n"), []byte("\n"))
}

// result is what a model sees of one tool call.
type result struct {
	tool    string
	isError bool
	text    string
	data    map[string]any
	err     error // a JSON-RPC error: an infrastructure failure
}

func (r result) String() string {
	if r.err != nil {
		return fmt.Sprintf("%s: JSON-RPC error: %v", r.tool, r.err)
	}
	return fmt.Sprintf("%s (isError=%v): %s", r.tool, r.isError, r.text)
}

func (r result) str(key string) string { s, _ := r.data[key].(string); return s }
func (r result) num(key string) float64 {
	n, _ := r.data[key].(float64)
	return n
}
func (r result) flag(key string) bool { b, _ := r.data[key].(bool); return b }

// call calls a tool as a model would and returns what came back.
func (c *client) call(t *testing.T, tool string, args map[string]any) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	return c.callCtx(ctx, tool, args)
}

func (c *client) callCtx(ctx context.Context, tool string, args map[string]any) result {
	if args == nil {
		args = map[string]any{}
	}
	res, err := c.cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	r := result{tool: tool, err: err}
	if err != nil {
		return r
	}
	r.isError = res.IsError
	var text strings.Builder
	for _, content := range res.Content {
		if tc, ok := content.(*sdk.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	r.text = text.String()
	if res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(raw, &r.data)
	}
	return r
}

// ok calls a tool and fails the test unless it succeeded.
func (c *client) ok(t *testing.T, tool string, args map[string]any) result {
	t.Helper()
	r := c.call(t, tool, args)
	if r.err != nil || r.isError {
		t.Fatalf("%s %v failed: %v", tool, args, r)
	}
	return r
}

// refused calls a tool and fails the test unless it was refused with a tool
// error (a sentence for the model) whose text contains every want.
func (c *client) refused(t *testing.T, tool string, args map[string]any, want ...string) result {
	t.Helper()
	r := c.call(t, tool, args)
	if r.err != nil {
		t.Fatalf("%s %v: want a tool error a model can act on, got a JSON-RPC error: %v", tool, args, r.err)
	}
	if !r.isError {
		t.Fatalf("%s %v: want it refused, got success: %s", tool, args, r.text)
	}
	for _, w := range want {
		if !strings.Contains(strings.ToLower(r.text), strings.ToLower(w)) {
			t.Errorf("%s %v: refusal %q does not say %q", tool, args, r.text, w)
		}
	}
	return r
}

// sandbox creates a sandbox through create_sandbox and returns its id.
func (c *client) sandbox(t *testing.T, args map[string]any) string {
	t.Helper()
	r := c.ok(t, "create_sandbox", args)
	id := r.str("sandbox_id")
	if id == "" {
		t.Fatalf("create_sandbox returned no sandbox_id: %s", r.text)
	}
	return id
}

// execOut is an execute_* result.
type execOut struct {
	result
	stdout, stderr string
	code           int
	timedOut       bool
	truncated      bool
}

// command runs execute_command and fails the test on a refusal or error.
func (c *client) command(t *testing.T, id, command string, timeoutS int) execOut {
	t.Helper()
	args := map[string]any{"sandbox_id": id, "command": command}
	if timeoutS > 0 {
		args["timeout_s"] = timeoutS
	}
	return execOf(c.ok(t, "execute_command", args))
}

// code runs execute_code and fails the test on a refusal or error.
func (c *client) code(t *testing.T, id, language, code string, timeoutS int) execOut {
	t.Helper()
	args := map[string]any{"sandbox_id": id, "language": language, "code": code}
	if timeoutS > 0 {
		args["timeout_s"] = timeoutS
	}
	return execOf(c.ok(t, "execute_code", args))
}

func execOf(r result) execOut {
	return execOut{result: r, stdout: r.str("stdout"), stderr: r.str("stderr"), code: int(r.num("exit_code")),
		timedOut: r.flag("timed_out"), truncated: r.flag("truncated")}
}

// stillServes checks that the engine still runs code in another sandbox.
func (c *client) stillServes(t *testing.T, bystander string) {
	t.Helper()
	out := c.code(t, bystander, "python", "print(6*7)", 30)
	if out.code != 0 || strings.TrimSpace(out.stdout) != "42" {
		t.Fatalf("the engine no longer serves other sandboxes: execute_code in the bystander gave %v", out.result)
	}
}

// inspect returns Docker's inspect document of a container.
func (e *env) inspect(t *testing.T, id string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	raw, err := e.docker.InspectRaw(ctx, id)
	if err != nil {
		t.Fatalf("inspect %s: %v", id, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("decode inspect of %s: %v", id, err)
	}
	return doc
}

// gvisor reports whether e's sandboxes run under gVisor.
func (e *env) gvisor() bool { return e.cfg.Sandbox.Runtime == "runsc" }

// execAs runs argv in sandbox id as user through Docker directly, as a
// sandbox with a non-root profile would run it, and returns its output.
func (e *env) execAs(t *testing.T, id, user string, argv ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	if _, err := e.docker.Exec(ctx, id, runtime.ExecOptions{Cmd: argv, User: user, Stdout: &out, Stderr: &out}); err != nil {
		t.Fatalf("exec %v as %s: %v", argv, user, err)
	}
	return out.String()
}

func randomName() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// jsonEqual compares two decoded JSON values.
func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func utf8Valid(b []byte) bool { return utf8.Valid(b) }
func jsonValid(b []byte) bool { return json.Valid(b) }

// eventually polls cond until it holds or within passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	testwait.Eventually(t, within, what, cond)
}

// containersOf counts the sandboxes carrying the test's labels (not the
// warm pool's spares).
func containersOf(t *testing.T, labels map[string]string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := docker.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	list, err := c.List(ctx, labels, true)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ctr := range list {
		// The warm pool's spares are not sandboxes; a spare handed out keeps
		// its pool label (labels are immutable) but loses the pool's name
		// (engine/internal/pool's Prefix, out of this package's reach).
		spare := ctr.Labels[sandbox.LabelPool] != "" && strings.HasPrefix(ctr.Name, "sandtray_pool-")
		if !spare {
			n++
		}
	}
	return n
}
