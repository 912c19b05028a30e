package engine

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/runtime/docker"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/test/dockertest"
)

// sandboxChanges writes files in and outside the workdir (binary, executable,
// symlinks, a cache, temp files) and deletes files the image had.
const sandboxChanges = `set -e
mkdir -p /workspace/proj/__pycache__ /opt/tool
printf 'print("hi")\n' > /workspace/proj/main.py
head -c 65536 /dev/urandom > /workspace/proj/data.bin
echo junk > /workspace/proj/__pycache__/main.pyc
printf '#!/bin/sh\necho tool\n' > /opt/tool/run.sh && chmod 750 /opt/tool/run.sh
ln -s proj/main.py /workspace/link.py
ln -s /opt/tool/run.sh /usr/local/bin/tool
echo 'export SANDTRAY_X=1' >> /root/.bashrc
echo scratch > /tmp/scratch
rm /etc/issue
rm -r /usr/share/doc/tar`

// describeScript prints, per path, its type, mode and checksum or target.
const describeScript = `for p in "$@"; do
  if [ -L "$p" ]; then echo "$p link $(readlink "$p")"
  elif [ -f "$p" ]; then echo "$p file $(stat -c '%a %u:%g' "$p") $(sha256sum < "$p" | cut -c1-64)"
  elif [ -d "$p" ]; then echo "$p dir $(stat -c '%a %u:%g' "$p")"
  else echo "$p missing"; fi
done`

func TestExportRoundTrip(t *testing.T) {
	t.Parallel()
	repo, _ := dockertest.ImageRepo(t)
	te := newTestEngine(t)
	ctx := context.Background()
	info := te.create(t, sandbox.CreateRequest{Name: "roundtrip", Env: map[string]string{"GREETING": `hi "$USER"`}})
	res, err := te.InstallPackages(ctx, te.owner, info.ID, sandbox.InstallRequest{Packages: []string{"jq"}, Manager: "apt"}, nil)
	if err != nil || len(res.Installed) != 1 {
		t.Fatalf("install jq: %+v, %v", res, err)
	}
	te.command(t, info.ID, sandboxChanges)

	dir := filepath.Join(te.cfg.Host.AllowedRoots[0], "export")
	ex, err := te.ExportDockerfile(ctx, te.owner, info.ID, dir)
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	t.Logf("Dockerfile:\n%s", ex.Dockerfile)
	for _, want := range []string{
		"FROM " + te.cfg.DefaultImage + "\n", `ENV GREETING="hi \"\$USER\""`, "'jq=" + res.Installed[0].Version + "'",
		"ADD rootfs.tar /\n", `RUN ["rm", "-rf", "--", "/etc/issue", "/usr/share/doc/tar"]`, "WORKDIR /workspace\n",
	} {
		if !strings.Contains(ex.Dockerfile, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	if ex.Dir != dir || !cmp.Equal(ex.Files, []string{"rootfs.tar"}) {
		t.Errorf("export dir %q files %v", ex.Dir, ex.Files)
	}
	archived := archiveNames(t, filepath.Join(dir, "rootfs.tar"))
	for _, name := range archived {
		if strings.Contains(name, "__pycache__") || strings.HasPrefix(name, "/tmp") || strings.HasPrefix(name, "/var/lib/dpkg") || name == "/usr/bin/jq" {
			t.Errorf("archive holds %s, which the export should skip", name)
		}
	}
	for _, want := range []string{"/workspace/proj/data.bin", "/workspace/link.py", "/usr/local/bin/tool", "/opt/tool/run.sh", "/root/.bashrc"} {
		if !slices.Contains(archived, want) {
			t.Errorf("archive lacks %s; it has %v", want, archived)
		}
	}

	rebuilt := buildExport(t, te, dir, repo+":rebuilt")
	check := append(archived, "/etc/issue", "/usr/share/doc/tar", "/root", "/workspace", "/usr/bin/jq")
	src := describe(t, te.docker, info.ID, check)
	if got := describe(t, te.docker, rebuilt, check); got != src {
		t.Errorf("rebuilt files differ (-source +rebuilt):\n%s", cmp.Diff(src, got))
	}
	version := []string{"sh", "-c", `dpkg-query -W -f='${Version}' jq; echo " $GREETING"`}
	if a, b := execOut(t, te.docker, info.ID, version...), execOut(t, te.docker, rebuilt, version...); a != b || !strings.HasPrefix(a, res.Installed[0].Version) {
		t.Errorf("jq version and env: source %q, rebuilt %q", a, b)
	}
}

// buildExport builds the export folder with the Docker API (no pull) and
// starts a container of the result, removed when the test ends.
func buildExport(t *testing.T, te *testEngine, dir, tag string) string {
	t.Helper()
	var ctxTar bytes.Buffer
	tw := tar.NewWriter(&ctxTar)
	if err := tw.AddFS(os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	var out bytes.Buffer
	if _, err := te.docker.BuildImage(context.Background(), &ctxTar, tag, &out); err != nil {
		t.Fatalf("build the export: %v\n%s", err, out.String())
	}
	o := runtime.CreateOptions{Image: tag, Labels: dockertest.Labels(t), Cmd: []string{"sleep", "infinity"}, Network: "none",
		MemoryMB: 128, MilliCPUs: 1000, PidsLimit: 64}
	id, err := te.docker.Create(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if err := te.docker.Start(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	return id
}

// archiveNames lists the archive's entries as absolute paths.
func archiveNames(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, "/"+strings.TrimSuffix(hdr.Name, "/"))
	}
}

func describe(t *testing.T, c *docker.Client, id string, paths []string) string {
	t.Helper()
	return execOut(t, c, id, append([]string{"sh", "-c", describeScript, "describe"}, paths...)...)
}

func execOut(t *testing.T, c *docker.Client, id string, cmd ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	code, err := c.Exec(context.Background(), id, runtime.ExecOptions{Cmd: cmd, Stdout: &out, Stderr: &errOut})
	if err != nil || code != 0 {
		t.Fatalf("exec %q: %d, %v: %s", cmd, code, err, errOut.String())
	}
	return out.String()
}

func TestExportFolders(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t)
	ctx := context.Background()
	info := te.create(t, sandbox.CreateRequest{})
	allowed := te.cfg.Host.AllowedRoots[0]

	clean, err := te.ExportDockerfile(ctx, te.owner, info.ID, "")
	if err != nil || len(clean.Files) != 0 || strings.Contains(clean.Dockerfile, "ADD") || clean.Dir != "" {
		t.Errorf("export of an unchanged sandbox = %+v, %v; want no files and no ADD", clean, err)
	}
	te.command(t, info.ID, "echo v1 > app.py")
	text, err := te.ExportDockerfile(ctx, te.owner, info.ID, "")
	if err != nil || !cmp.Equal(text.Files, []string{"rootfs.tar"}) || !strings.Contains(text.Dockerfile, "ADD rootfs.tar /") {
		t.Errorf("text export = %+v, %v", text, err)
	}
	if entries, _ := os.ReadDir(allowed); len(entries) != 0 {
		t.Errorf("a text-only export wrote %v", entries)
	}

	_, err = te.ExportDockerfile(ctx, te.owner, info.ID, filepath.Join(t.TempDir(), "out"))
	wantKind(t, err, sandbox.ErrForbidden)
	_, err = te.ExportDockerfile(ctx, te.owner, info.ID, "relative/out")
	wantKind(t, err, sandbox.ErrInvalid)

	foreign := filepath.Join(allowed, "foreign")
	os.Mkdir(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, "Dockerfile"), []byte("FROM scratch\n"), 0o644)
	_, err = te.ExportDockerfile(ctx, te.owner, info.ID, foreign)
	wantKind(t, err, sandbox.ErrConflict)
	if b, _ := os.ReadFile(filepath.Join(foreign, "Dockerfile")); string(b) != "FROM scratch\n" {
		t.Errorf("the user's Dockerfile was changed to %q", b)
	}

	dir := filepath.Join(allowed, "env")
	if _, err := te.ExportDockerfile(ctx, te.owner, info.ID, dir); err != nil {
		t.Fatalf("first export: %v", err)
	}
	// A link planted where the archive goes: the folder no longer holds
	// exactly Sandtray's export, so it is refused, and the link never followed.
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	os.Remove(filepath.Join(dir, "rootfs.tar"))
	if err := os.Symlink(victim, filepath.Join(dir, "rootfs.tar")); err != nil {
		t.Fatal(err)
	}
	_, err = te.ExportDockerfile(ctx, te.owner, info.ID, dir)
	wantKind(t, err, sandbox.ErrConflict)
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("export wrote through a symlink: victim now %q", b)
	}
	// Its own untouched export is written again.
	dir = filepath.Join(allowed, "env2")
	if _, err := te.ExportDockerfile(ctx, te.owner, info.ID, dir); err != nil {
		t.Fatalf("export: %v", err)
	}
	te.command(t, info.ID, "echo v2 > app.py")
	if _, err := te.ExportDockerfile(ctx, te.owner, info.ID, dir); err != nil {
		t.Fatalf("export over an earlier export: %v", err)
	}
	if st, err := os.Lstat(filepath.Join(dir, "rootfs.tar")); err != nil || !st.Mode().IsRegular() {
		t.Errorf("rootfs.tar after re-export: %v, %v", st, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("export folder holds %v, want Dockerfile, .dockerignore and rootfs.tar", entries)
	}

	picked := filepath.Join(t.TempDir(), "picked") // outside the allowed roots: the GUI's dialog
	if ex, err := te.SaveDockerfile(ctx, info.ID, picked); err != nil || ex.Dir != picked {
		t.Errorf("SaveDockerfile = %+v, %v", ex, err)
	}
}
