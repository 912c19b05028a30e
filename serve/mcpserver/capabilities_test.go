package mcpserver

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/runtime/fakeruntime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// withCommit is the fake, which cannot diff or commit (as a cluster
// cannot), with a Committer: enough for the tools to be listed.
type withCommit struct{ *fakeruntime.Runtime }

func (withCommit) Diff(context.Context, string) ([]runtime.Change, error) { return nil, nil }
func (withCommit) Commit(context.Context, string, string, runtime.ImageConfig) (string, error) {
	return "", errors.ErrUnsupported
}

// engineOn starts an engine on rt, a fake daemon's client with a usable
// default image.
func engineOn(t *testing.T, fake *fakeruntime.Runtime, rt runtime.Runtime) *engine.Engine {
	t.Helper()
	fake.AddImage("sandtray-caps-test:1", runtime.Image{Cmd: []string{"/bin/sh"}}, nil)
	cfg := config.Default()
	cfg.DefaultImage = "sandtray-caps-test:1"
	cfg.StateDir = t.TempDir()
	cfg.Pool.Size = 0
	e, err := engine.New(context.Background(), cfg, engine.Options{Runtime: rt, Tick: 50 * time.Millisecond, CgroupRoot: t.TempDir(),
		Labels: map[string]string{sandbox.LabelTest: t.Name()}})
	if err != nil {
		t.Fatalf("engine on the fake runtime: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := e.Close(ctx); err != nil {
			t.Errorf("close the engine: %v", err)
		}
	})
	return e
}

func toolNames(t *testing.T, e *engine.Engine) []string {
	t.Helper()
	c := mcpGoClient(t, serveWith(t, newServer0(e)))
	res, err := c.ListTools(testContext(t), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// newServer0 is a server on e with the engine's languages.
func newServer0(e *engine.Engine) *Server {
	return New(e, Options{Languages: engine.Languages(), LanguageAliases: engine.LanguageAliases()})
}

// TestARuntimeWithoutCommitHasNoCommitTools: an engine on a runtime that
// cannot commit does not list commit_sandbox, nor the snapshot, fork, diff
// and export tools made of commits and diffs; the engine refuses a commit
// naming the runtime; the other tools are there and work. On a runtime that
// can, every tool is listed.
func TestARuntimeWithoutCommitHasNoCommitTools(t *testing.T) {
	fake := fakeruntime.New()
	full := toolNames(t, engineOn(t, fake, withCommit{fake}))
	for name := range ToolNeeds {
		if !slices.Contains(full, name) {
			t.Errorf("%s is missing from tools/list on a runtime that can commit", name)
		}
	}

	fake2 := fakeruntime.New()
	fake2.SetName("nocommit")
	e := engineOn(t, fake2, fake2)
	names := toolNames(t, e)
	for name := range ToolNeeds {
		if slices.Contains(names, name) {
			t.Errorf("tools/list has %s on a runtime that cannot commit", name)
		}
	}
	if len(names) != len(full)-len(ToolNeeds) || !slices.Contains(names, "execute_command") {
		t.Errorf("tools/list on a runtime without commit: %v", names)
	}

	owner := sandbox.Owner{Session: "s1", Client: "caps-test 1"}
	e.SessionStarted(owner)
	_, err := e.Commit(testContext(t), owner, "", sandbox.CommitRequest{Image: "mine:1"}, nil)
	if !errors.Is(err, sandbox.ErrUnsupported) || !strings.Contains(err.Error(), `"nocommit" runtime cannot diff or commit`) {
		t.Errorf("a commit on a runtime without it: %v, want sandbox.ErrUnsupported naming the runtime", err)
	}

	c := mcpGoClient(t, serveWith(t, newServer0(e)))
	res := callMCPGo(t, c, "execute_command", map[string]any{"command": "echo still here"})
	if res.IsError || !strings.Contains(textOfResult(res), "still here") {
		t.Errorf("execute_command on a runtime without commit: %s", textOfResult(res))
	}
	req := callRequest("commit_sandbox", map[string]any{"image": "mine:1"})
	if res, err := c.CallTool(testContext(t), req); err == nil && !res.IsError {
		t.Errorf("commit_sandbox, which is not listed, answered: %s", textOfResult(res))
	}
}
