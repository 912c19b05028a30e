package mcpserver

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestBadArgumentsAreToolErrorsAModelCanActOn(t *testing.T) {
	tests := []struct {
		name string
		tool string
		args map[string]any
		want []string // substrings of the tool error
	}{
		{"unknown language lists the supported ones", "execute_code", map[string]any{"code": "x", "language": "cobol"},
			[]string{`Unknown language "cobol"`, "python, bash, sh, javascript, c"}},
		{"missing required code", "execute_code", map[string]any{"language": "python"},
			[]string{`Missing required argument "code"`}},
		{"empty command", "execute_command", map[string]any{"command": ""},
			[]string{`Argument "command" must not be empty`}},
		{"negative timeout", "execute_command", map[string]any{"command": "ls", "timeout_s": -1},
			[]string{`"timeout_s" must not be negative`}},
		{"timeout of the wrong type", "execute_code", map[string]any{"code": "x", "timeout_s": "ten"},
			[]string{`"timeout_s" must be a number, not the string "ten"`}},
		{"env values must be strings", "execute_command", map[string]any{"command": "ls", "env": map[string]any{"N": 1}},
			[]string{`env["N"] must be a string`}},
		{"misspelt argument", "execute_command", map[string]any{"command": "ls", "timeout": 5},
			[]string{`execute_command has no argument "timeout"`, "timeout_s"}},
		{"bad write encoding names the valid values", "write_file", map[string]any{"sandbox_id": "a", "path": "p", "content": "c", "encoding": "hex"},
			[]string{`Unknown encoding "hex"`, "utf8, base64"}},
		{"bad read encoding", "read_file", map[string]any{"sandbox_id": "a", "path": "p", "encoding": "latin1"},
			[]string{`Unknown encoding "latin1"`, "utf8, base64"}},
		{"invalid base64", "write_file", map[string]any{"sandbox_id": "a", "path": "p", "content": "!!!", "encoding": "base64"},
			[]string{"content is not valid base64"}},
		{"missing content", "write_file", map[string]any{"sandbox_id": "a", "path": "p"},
			[]string{`Missing required argument "content"`}},
		{"mode not octal", "write_file", map[string]any{"sandbox_id": "a", "path": "p", "content": "", "mode": "rwx"},
			[]string{`"mode" must be an octal permission string like "0644"`}},
		{"missing sandbox_id says where to find one", "read_file", map[string]any{"path": "p"},
			[]string{`Missing required argument "sandbox_id"`, "list_sandboxes"}},
		{"bad network", "create_sandbox", map[string]any{"network": "host"},
			[]string{`Unknown network "host"`, "none, egress, bridge"}},
		{"fractional memory", "create_sandbox", map[string]any{"memory_mb": 1.5},
			[]string{`"memory_mb" must be a whole number`}},
		{"depth out of range", "list_files", map[string]any{"sandbox_id": "a", "depth": 0},
			[]string{`"depth" must be between 1 and 10`}},
		{"negative offset", "read_file", map[string]any{"sandbox_id": "a", "path": "p", "offset": -4},
			[]string{`"offset" must not be negative`}},
		{"persistent not a bool", "persist_sandbox", map[string]any{"sandbox_id": "a", "persistent": "yes"},
			[]string{`"persistent" must be true or false`}},
		{"zero tail", "sandbox_logs", map[string]any{"sandbox_id": "a", "tail": 0},
			[]string{`"tail" must be at least 1`}},
		{"no packages", "install_packages", map[string]any{"sandbox_id": "a", "packages": []any{}},
			[]string{`"packages" must list at least one package`, `["numpy", "pandas"]`}},
		{"packages missing", "install_packages", map[string]any{"sandbox_id": "a"},
			[]string{`Missing required argument "packages"`}},
		{"packages as one string", "install_packages", map[string]any{"sandbox_id": "a", "packages": "numpy pandas"},
			[]string{`"packages" must be an array of package names`}},
		{"two packages in one item", "install_packages", map[string]any{"sandbox_id": "a", "packages": []any{"numpy", "numpy pandas"}},
			[]string{`packages[1] "numpy pandas" contains a space`}},
		{"an option for a package", "install_packages", map[string]any{"sandbox_id": "a", "packages": []any{"--index-url=http://evil"}},
			[]string{`packages[0] "--index-url=http://evil" looks like an option`}},
		{"a package that is not a string", "install_packages", map[string]any{"sandbox_id": "a", "packages": []any{3}},
			[]string{`packages[0] must be a package name (a string), not the number 3`}},
		{"unknown manager", "install_packages", map[string]any{"sandbox_id": "a", "packages": []any{"x"}, "manager": "cargo"},
			[]string{`Unknown manager "cargo"`, "auto, apt, pip, npm, apk"}},
		{"image without a tag", "commit_sandbox", map[string]any{"sandbox_id": "a", "image": "my-env"},
			[]string{`"my-env" has no tag`, `repo:tag`}},
		{"image with a registry port but no tag", "commit_sandbox", map[string]any{"sandbox_id": "a", "image": "localhost:5000/env"},
			[]string{`"localhost:5000/env" has no tag`}},
		{"image in capitals", "commit_sandbox", map[string]any{"sandbox_id": "a", "image": "My-Env:V1"},
			[]string{`must be lowercase before the tag: "my-env:V1"`}},
		{"image by digest", "commit_sandbox", map[string]any{"sandbox_id": "a", "image": "env@sha256:abc"},
			[]string{"is a digest reference"}},
		{"image with a bad character", "commit_sandbox", map[string]any{"sandbox_id": "a", "image": "my env:v1"},
			[]string{`"my env:v1" is not a valid image name`}},
		{"image missing", "commit_sandbox", map[string]any{"sandbox_id": "a"},
			[]string{`Missing required argument "image"`}},
		{"overwrite not a bool", "commit_sandbox", map[string]any{"sandbox_id": "a", "image": "e:1", "overwrite": "yes"},
			[]string{`"overwrite" must be true or false`}},
		{"export without a sandbox", "export_dockerfile", map[string]any{"host_path": "/tmp/x"},
			[]string{`Missing required argument "sandbox_id"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFake()
			c := mcpGoClient(t, serve(t, fake, Options{}))
			res := callMCPGo(t, c, tt.tool, tt.args)
			text := textOfResult(res)
			if !res.IsError {
				t.Fatalf("want a tool error, got success: %s", text)
			}
			for _, want := range tt.want {
				if !strings.Contains(text, want) {
					t.Errorf("tool error %q lacks %q", text, want)
				}
			}
			if n := fake.callCount(); n != 0 {
				t.Errorf("backend was called %d times for invalid input; last: %+v", n, fake.lastCall())
			}
		})
	}
}

func TestNonUTF8ReadSuggestsBase64(t *testing.T) {
	fake := newFake()
	fake.file = sandbox.FileContent{Path: "/workspace/img.png", Data: []byte{0x89, 'P', 'N', 'G', 0xff}, Size: 5}
	c := mcpGoClient(t, serve(t, fake, Options{}))
	res := callMCPGo(t, c, "read_file", map[string]any{"sandbox_id": "a", "path": "img.png"})
	if text := textOfResult(res); !res.IsError || !strings.Contains(text, `/workspace/img.png is not UTF-8 text`) || !strings.Contains(text, `encoding "base64"`) {
		t.Errorf("want a tool error suggesting base64, got isError=%v %q", res.IsError, text)
	}
}

func TestBackendErrorsAreSortedByKind(t *testing.T) {
	t.Run("user error becomes a tool error with its message, without Go's error kind", func(t *testing.T) {
		fake := newFake()
		fake.err = fmt.Errorf("no sandbox named %q; list_sandboxes shows them: %w", "web", sandbox.ErrNotFound)
		c := mcpGoClient(t, serve(t, fake, Options{}))
		res := callMCPGo(t, c, "stop_sandbox", map[string]any{"sandbox_id": "web"})
		if want := `no sandbox named "web"; list_sandboxes shows them`; !res.IsError || textOfResult(res) != want {
			t.Errorf("got isError=%v %q, want tool error %q", res.IsError, textOfResult(res), want)
		}
	})
	t.Run("infrastructure failure becomes a JSON-RPC error", func(t *testing.T) {
		fake := newFake()
		fake.err = fmt.Errorf("dial docker: %w", sandbox.ErrUnavailable)
		c := mcpGoClient(t, serve(t, fake, Options{}))
		req := callRequest("list_sandboxes", nil)
		_, err := c.CallTool(testContext(t), req)
		if err == nil || !strings.Contains(err.Error(), "docker unavailable") {
			t.Errorf("CallTool error = %v, want a JSON-RPC error mentioning the cause", err)
		}
	})
}
