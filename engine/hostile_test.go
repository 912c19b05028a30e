package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// flood is a program of the model's that prints 400 MB with no newline,
// then kills itself, as the hostile cat and python3 did.
const flood = "#!/bin/dash\n/usr/bin/head -c 400000000 /dev/zero\nkill -9 $$\n"

// flooded are the programs an engine used to run in a sandbox (through its
// PATH), and those a model's tools reach: each replaced by flood, first on
// the sandbox's PATH and in place.
var flooded = []string{"cat", "python3", "stat", "tar", "find", "mkdir", "rm", "chmod", "dpkg-query", "apt-mark",
	"md5sum", "sed", "apt-get", "pip3", "pip", "npm", "update-ca-certificates", "bash", "readlink"}

// TestHostileProgramsDoNotGrowTheEngine (F56): with every program the
// engine ever ran in a sandbox replaced by one that prints 400 MB without a
// newline (then kills itself), every tool still answers, and the engine's
// heap grows by a few MB at most: everything it reads from a sandbox is
// bounded, and nothing it runs there is the sandbox's but the model's own
// command.
func TestHostileProgramsDoNotGrowTheEngine(t *testing.T) {
	te := newTestEngine(t, func(c *config.Config) { c.Host.AllowedRoots = []string{t.TempDir()} })
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	var plant strings.Builder
	plant.WriteString("set -e\nprintf '%s' \"$FLOOD\" > /tmp/flood; chmod 755 /tmp/flood\n")
	for _, p := range flooded {
		plant.WriteString("cp /tmp/flood /usr/local/bin/" + p + "\n")
		plant.WriteString("for d in /usr/bin /bin /usr/sbin /sbin; do [ -e $d/" + p + " ] && [ ! -L $d/" + p + " ] && cp /tmp/flood $d/" + p + "; done; true\n")
	}
	plant.WriteString("echo planted\n")
	r, err := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: plant.String(), Env: map[string]string{"FLOOD": flood}})
	if err != nil || !strings.HasPrefix(r.Result.Stdout, "planted\n") {
		t.Fatalf("plant the hostile programs: %+v, %v", r.Result, err)
	}
	calls := []struct {
		what string
		do   func() error
	}{
		{"a command ended by SIGKILL (the OOM count is read)", func() error {
			_, err := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "kill -9 $$"})
			return err
		}},
		{"a command that runs the hostile cat", func() error {
			_, err := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "cat", Timeout: 60 * time.Second})
			return err
		}},
		{"execute_code python (the hostile python3 as the kernel)", func() error {
			_, err := te.ExecCode(ctx, te.owner, id, sandbox.CodeRequest{Code: "print(1)", Timeout: 60 * time.Second})
			return err
		}},
		{"write_file", func() error {
			_, err := te.WriteFile(ctx, te.owner, id, sandbox.WriteRequest{Path: "a.txt", Data: []byte("x")})
			return err
		}},
		{"read_file", func() error { _, err := te.ReadFile(ctx, te.owner, id, "a.txt", 0, 0); return err }},
		{"list_files", func() error { _, err := te.ListFiles(ctx, te.owner, id, "/", 2, true); return err }},
		{"make_directory", func() error { _, err := te.MakeDirectory(ctx, te.owner, id, "d/e"); return err }},
		{"copy_from_sandbox", func() error {
			_, err := te.CopyFromSandbox(ctx, te.owner, id, "a.txt", te.cfg.Host.AllowedRoots[0]+"/a.txt")
			return err
		}},
		{"expose_port", func() error { _, err := te.ExposePort(ctx, te.owner, id, 8000, 0); return err }},
		{"diff_sandbox", func() error { _, err := te.Diff(ctx, te.owner, id, ""); return err }},
		{"export_dockerfile", func() error { _, err := te.ExportDockerfile(ctx, te.owner, id, ""); return err }},
		{"install_packages apt (the hostile apt-get)", func() error {
			_, err := te.InstallPackages(ctx, te.owner, id, sandbox.InstallRequest{Packages: []string{"jq"}, Manager: "apt"}, nil)
			return err
		}},
	}
	rise, _ := heapPeak(func() {
		for _, c := range calls {
			err := c.do() // a hostile program may fail the call: the engine must only answer
			t.Logf("%s: %v", c.what, err)
		}
	})
	if r := te.command(t, id, "echo still here"); r.Stdout != "still here\n" {
		t.Errorf("after the hostile programs: %+v", r)
	}
	if rise > 64<<20 {
		t.Errorf("the engine's heap rose by %d MB while the sandbox's programs printed 400 MB each", rise>>20)
	}
}
