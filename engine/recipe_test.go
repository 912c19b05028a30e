package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/runtime/fakeruntime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// recipeImage is the image the recipe's runtime has.
const recipeImage = "sandtray-recipe/sandbox:1"

// recipeHosts records the host each connection of the recipe's runtime
// was given.
var recipeHosts = make(chan string, 8)

// The recipe's runtime, as docs/architecture.md's "A runtime" has it: a
// package of its own (this test package stands in for it) that registers a
// Connector under its name in its init. It is the in-memory fake under a
// name of its own.
func init() {
	runtime.Register("recipe", func(ctx context.Context, host string) (runtime.Runtime, error) {
		recipeHosts <- host
		rt := fakeruntime.New()
		rt.SetName("recipe")
		rt.AddImage(recipeImage, runtime.Image{Cmd: []string{"/bin/sh"}}, nil)
		return rt, nil
	})
}

// TestANewRuntimeIsOneConfigValue: with the runtime registered, one value
// in config.toml ([runtime] name) makes the engine connect to it, at
// [runtime] host, with nothing else changed; a tool runs on it, and the
// engine says which runtime it is and what it cannot do. A name no runtime
// registered stops the engine, naming the ones there are.
func TestANewRuntimeIsOneConfigValue(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	toml := "default_image = \"" + recipeImage + "\"\n\n[pool]\nsize = 0\n\n[runtime]\nname = \"recipe\"\nhost = \"recipe://here\"\n"
	if err := os.WriteFile(path, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	cfg.StateDir = filepath.Join(dir, "state")
	ctx := context.Background()
	e, err := engine.New(ctx, cfg, engine.Options{Tick: 50 * time.Millisecond, CgroupRoot: t.TempDir(),
		Labels: map[string]string{sandbox.LabelTest: t.Name()}})
	if err != nil {
		t.Fatalf("an engine on the recipe's runtime: %v", err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := e.Close(cctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	select {
	case host := <-recipeHosts:
		if host != "recipe://here" {
			t.Errorf("the runtime was given host %q, want [runtime] host", host)
		}
	default:
		t.Fatal("the engine did not connect to the runtime [runtime] name chose")
	}
	if caps := e.Capabilities(); caps.Runtime != "recipe" || caps.Commit {
		t.Errorf("the engine's runtime: %+v, want recipe, which cannot commit", caps)
	}

	owner := sandbox.Owner{Session: "s-recipe", Client: "recipe-test 1.0"}
	e.SessionStarted(owner)
	out, err := e.ExecCommand(ctx, owner, "", sandbox.CommandRequest{Command: "echo hello from the recipe"})
	if err != nil || out.Result.ExitCode != 0 || out.Result.Stdout != "hello from the recipe\n" {
		t.Errorf("execute_command on the recipe's runtime: %+v, %v", out.Result, err)
	}
	_, err = e.Commit(ctx, owner, "", sandbox.CommitRequest{Image: "mine:1"}, nil)
	if !errors.Is(err, sandbox.ErrUnsupported) || !strings.Contains(err.Error(), `"recipe" runtime`) {
		t.Errorf("commit_sandbox on a runtime that cannot: %v, want a refusal naming the runtime", err)
	}

	cfg.Runtime.Name = "no-such-runtime"
	cfg.StateDir = filepath.Join(dir, "state2")
	_, err = engine.New(ctx, cfg, engine.Options{})
	if err == nil || !strings.Contains(err.Error(), `"no-such-runtime"`) || !strings.Contains(err.Error(), `"recipe"`) {
		t.Errorf("an engine on a runtime no package registered: %v, want an error naming it and the runtimes there are", err)
	}
}
