package securitytest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/test/dockertest"
)

// TestExportReplacesOnlyItsOwnExport: export_dockerfile writes over a folder
// only when it holds exactly Sandtray's own earlier export: a Dockerfile the
// sandbox wrote there (with Sandtray's first line) does not let it replace
// the user's .dockerignore, nor does a user's later edit get lost.
func TestExportReplacesOnlyItsOwnExport(t *testing.T) {
	e := newEnv(t)
	c := e.client
	id := c.sandbox(t, nil)
	c.command(t, id, "echo data > file.txt", 10)

	proj := filepath.Join(e.root, "proj")
	os.Mkdir(proj, 0o755)
	os.WriteFile(filepath.Join(proj, ".dockerignore"), []byte("user rules\n"), 0o644)
	// The model plants a "Sandtray" Dockerfile through a valid copy (a new file).
	c.command(t, id, `printf '# Dockerfile written by Sandtray from sandbox x\nFROM scratch\n' > Dockerfile`, 10)
	c.ok(t, "copy_from_sandbox", map[string]any{"sandbox_id": id, "path": "Dockerfile", "host_path": filepath.Join(proj, "Dockerfile")})
	c.refused(t, "export_dockerfile", map[string]any{"sandbox_id": id, "host_path": proj}, "never overwrites")
	if b, _ := os.ReadFile(filepath.Join(proj, ".dockerignore")); string(b) != "user rules\n" {
		t.Errorf("export_dockerfile replaced the user's .dockerignore with %q", b)
	}

	// Its own export may be written again; once the user edits it, not.
	exp := filepath.Join(e.root, "exp")
	c.ok(t, "export_dockerfile", map[string]any{"sandbox_id": id, "host_path": exp})
	c.ok(t, "export_dockerfile", map[string]any{"sandbox_id": id, "host_path": exp})
	edited := filepath.Join(exp, "Dockerfile")
	b, _ := os.ReadFile(edited)
	os.WriteFile(edited, append(b, "# my change\n"...), 0o644)
	c.refused(t, "export_dockerfile", map[string]any{"sandbox_id": id, "host_path": exp}, "never overwrites")
	if got, _ := os.ReadFile(edited); !strings.HasSuffix(string(got), "# my change\n") {
		t.Error("export_dockerfile replaced the user's edited Dockerfile")
	}
}

// TestExportLimits: export_dockerfile's rootfs.tar is bounded by
// limits.max_copy_bytes and limits.max_copy_files like a copy.
func TestExportLimits(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.Limits.MaxCopyBytes, c.Limits.MaxCopyFiles = 64<<20, 200 })
	c := e.client
	id := c.sandbox(t, nil)
	c.command(t, id, "truncate -s 100M big.bin", 10)
	dst := filepath.Join(e.root, "big")
	c.refused(t, "export_dockerfile", map[string]any{"sandbox_id": id, "host_path": dst}, "limits.max_copy_bytes")
	if _, err := os.Stat(filepath.Join(dst, "rootfs.tar")); err == nil {
		t.Errorf("a refused export left rootfs.tar behind")
	}
	c.command(t, id, "rm big.bin && mkdir many && cd many && for i in $(seq 300); do : > f$i; done", 60)
	dst = filepath.Join(e.root, "many")
	c.refused(t, "export_dockerfile", map[string]any{"sandbox_id": id, "host_path": dst}, "limits.max_copy_files")
	if _, err := os.Stat(filepath.Join(dst, "rootfs.tar")); err == nil {
		t.Errorf("a refused export left rootfs.tar behind")
	}
}

// TestExportValidatesTheBaseUser: a base image whose USER holds a line break
// cannot put a line of its own into the Dockerfile an export writes.
func TestExportValidatesTheBaseUser(t *testing.T) {
	repo, _ := dockertest.ImageRepo(t)
	e := newEnv(t, func(c *config.Config) { c.Sandbox.User = "1000:1000"; c.Pool.Size = 0 })
	c := e.client
	donor := c.sandbox(t, nil)
	// A commit of the 459 MB test image took over a minute on this shared
	// machine under load.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tag := repo + ":evil-user"
	if _, err := e.docker.Commit(ctx, donor, tag, runtime.ImageConfig{User: "nobody\nRUN touch /pwned", Cmd: []string{"sleep", "infinity"}}); err != nil {
		t.Fatal(err)
	}
	id := c.sandbox(t, map[string]any{"image": tag})
	c.command(t, id, "echo x > file.txt", 10)
	r := c.call(t, "export_dockerfile", map[string]any{"sandbox_id": id})
	if strings.Contains(r.str("dockerfile")+r.text, "\nRUN touch /pwned") {
		t.Fatalf("the base image's USER put a RUN line into the Dockerfile:\n%s", r.str("dockerfile"))
	}
	if !r.isError || !strings.Contains(r.text, "USER") {
		t.Errorf("want the export refused, naming the base image's USER: %s", fmt.Sprint(r))
	}
}
