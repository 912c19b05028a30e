package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestNonRootSandbox is the non-root profile (sandbox.user, CIS 4.1) end to
// end: code runs as the user, in a workdir it owns, and can change the files
// the engine writes for it, while install_packages still runs as root. Its
// subtests share one sandbox, in order.
func TestNonRootSandbox(t *testing.T) {
	te := newTestEngine(t, func(c *config.Config) { c.Sandbox.User = "1000:1000" })
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID

	t.Run("execute_command runs as the user in a workdir it owns", func(t *testing.T) {
		got := te.command(t, id, `id -u; id -g; touch made-by-code && stat -c %u:%g . made-by-code`).Stdout
		if want := "1000\n1000\n1000:1000\n1000:1000\n"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})

	t.Run("write_file gives the user its files", func(t *testing.T) {
		for _, p := range []string{"notes.txt", "deep/er/notes.txt"} {
			if _, err := te.WriteFile(ctx, te.owner, id, sandbox.WriteRequest{Path: p, Data: []byte("first\n")}); err != nil {
				t.Fatalf("write_file %s: %v", p, err)
			}
			r := te.command(t, id, "echo more >> "+p+" && cat "+p+" && stat -c %u:%g "+p)
			if want := "first\nmore\n1000:1000\n"; r.Stdout != want || r.ExitCode != 0 {
				t.Errorf("%s: exit %d, stdout %q, stderr %q; want %q", p, r.ExitCode, r.Stdout, r.Stderr, want)
			}
		}
		if got := te.command(t, id, "stat -c %u:%g deep deep/er").Stdout; got != "1000:1000\n1000:1000\n" {
			t.Errorf("folders write_file made: owners %q, want the user's", got)
		}
	})

	t.Run("copy_to_sandbox gives the user its files", func(t *testing.T) {
		src := filepath.Join(te.cfg.Host.AllowedRoots[0], "proj")
		if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, "sub", "a.txt"), []byte("first\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := te.CopyToSandbox(ctx, te.owner, id, src, ""); err != nil {
			t.Fatalf("copy_to_sandbox: %v", err)
		}
		r := te.command(t, id, "echo more >> proj/sub/a.txt && touch proj/sub/b.txt && stat -c %u:%g proj proj/sub proj/sub/a.txt")
		if want := "1000:1000\n1000:1000\n1000:1000\n"; r.Stdout != want || r.ExitCode != 0 {
			t.Errorf("exit %d, stdout %q, stderr %q; want %q", r.ExitCode, r.Stdout, r.Stderr, want)
		}
	})

	t.Run("execute_code's kernels run as the user", func(t *testing.T) {
		for lang, code := range map[string]string{
			"python":     "import os\nopen('by-python.txt', 'w').write('k')\nprint(os.getuid(), os.getgid())",
			"bash":       "echo k > by-bash.txt && echo $(id -u) $(id -g)",
			"javascript": "require('fs').writeFileSync('by-node.txt', 'k'); console.log(process.getuid(), process.getgid())",
		} {
			out, err := te.ExecCode(ctx, te.owner, id, sandbox.CodeRequest{Language: lang, Code: code})
			if err != nil {
				t.Fatalf("execute_code in %s: %v", lang, err)
			}
			if got := out.Result.Stdout; got != "1000 1000\n" {
				t.Errorf("%s: stdout %q (stderr %q), want \"1000 1000\\n\"", lang, got, out.Result.Stderr)
			}
		}
	})

	t.Run("a timeout kills the user's processes", func(t *testing.T) {
		out, err := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "sleep 300", Timeout: time.Second})
		if err != nil || !out.Result.TimedOut {
			t.Fatalf("sleep 300 with a 1 s timeout: %+v, %v; want a timeout", out.Result, err)
		}
		if got := te.command(t, id, "ps -eo user:12,args | grep '[s]leep 300' || true").Stdout; got != "" {
			t.Errorf("still running after the timeout:\n%s", got)
		}
	})

	t.Run("install_packages runs as root", func(t *testing.T) {
		// apt-get refuses to install as anyone but root, so a working
		// install is the proof; the user can then run what it installed.
		res, err := te.InstallPackages(ctx, te.owner, id, sandbox.InstallRequest{Packages: []string{"tree"}, Manager: "apt"}, nil)
		if err != nil {
			t.Fatalf("install tree: %v", err)
		}
		if len(res.Installed) != 1 || res.Installed[0].Name != "tree" {
			t.Errorf("installed %+v, want tree", res.Installed)
		}
		r := te.command(t, id, "id -u; tree -d --noreport proj")
		if want := "1000\nproj\n└── sub\n"; r.Stdout != want {
			t.Errorf("tree as the user: stdout %q, stderr %q; want %q", r.Stdout, r.Stderr, want)
		}
	})
}

// TestNonRootSandboxByName: a user given by name is looked up in the image,
// for the container, its workdir and the files the engine writes, on the
// warm pool's path as on the cold one.
func TestNonRootSandboxByName(t *testing.T) {
	te := newPoolEngine(t, 1, func(c *config.Config) { c.Sandbox.User = "nobody" })
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	if !te.fromPool(t, id) {
		t.Fatal("the sandbox did not come from the warm pool")
	}
	if _, err := te.WriteFile(ctx, te.owner, id, sandbox.WriteRequest{Path: "notes.txt", Data: []byte("first\n")}); err != nil {
		t.Fatalf("write_file: %v", err)
	}
	r := te.command(t, id, "id -un; echo more >> notes.txt && stat -c %U:%G . notes.txt")
	if want := "nobody\nnobody:nogroup\nnobody:nogroup\n"; r.Stdout != want {
		t.Errorf("stdout %q, stderr %q; want %q", r.Stdout, r.Stderr, want)
	}

	// A user the image lacks fails the create with a sentence naming it.
	te2 := newTestEngine(t, func(c *config.Config) { c.Sandbox.User = "no-such-user" })
	_, err := te2.Create(ctx, te2.owner, sandbox.CreateRequest{}, nil)
	wantKind(t, err, sandbox.ErrInvalid)
	if !strings.Contains(err.Error(), "sandbox.user") || !strings.Contains(err.Error(), `"no-such-user"`) {
		t.Errorf("error %q does not name sandbox.user and the user", err)
	}
}
