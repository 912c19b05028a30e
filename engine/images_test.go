package engine

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/test/dockertest"
)

// buildImage builds an image FROM scratch holding files (path → content,
// made executable), without a registry, and passes its tag to remove:
// dockertest.RemoveImagesLater's, taken before the engine, so the image goes
// after the sandboxes made from it (removed while one uses it, Docker would
// only untag it and leave a dangling image behind).
func buildImage(t *testing.T, te *testEngine, remove func(ref string), name string, files map[string][]byte, extra string) string {
	t.Helper()
	tag := "sandtray-test/" + name + ":" + randomHex(4)
	var ctxTar, out bytes.Buffer
	tw := tar.NewWriter(&ctxTar)
	dockerfile := "FROM scratch\n"
	for p, data := range files {
		tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(p, "/"), Mode: 0o755, Size: int64(len(data))})
		tw.Write(data)
		dockerfile += "COPY " + strings.TrimPrefix(p, "/") + " " + p + "\n"
	}
	dockerfile += extra
	tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(dockerfile))})
	tw.Write([]byte(dockerfile))
	tw.Close()
	if _, err := te.docker.BuildImage(context.Background(), &ctxTar, tag, &out); err != nil {
		t.Fatalf("build %s: %v\n%s", name, err, out.String())
	}
	remove(tag)
	return tag
}

// busyboxImage is Debian's busybox-static alone, FROM scratch: a shell and
// the usual tools, no python3, no libc.
func busyboxImage(t *testing.T, te *testEngine, remove func(ref string)) string {
	t.Helper()
	bb, err := os.ReadFile("/bin/busybox")
	if err != nil || !bytes.Contains(bb[:min(len(bb), 4096)], []byte("ELF")) {
		t.Skip("no /bin/busybox here (Debian's busybox-static; make test installs it)")
	}
	return buildImage(t, te, remove, "busybox", map[string][]byte{"/bin/busybox": bb},
		"RUN [\"/bin/busybox\", \"--install\", \"-s\", \"/bin\"]\nENV PATH=/bin\n")
}

// TestBusyBoxImage: in an image with BusyBox and nothing else (no python3),
// commands, the file tools, a forwarded port and the egress gate all work:
// they need nothing of the image but what the command runs.
func TestBusyBoxImage(t *testing.T) {
	remove := dockertest.RemoveImagesLater(t) // before the engine: see buildImage
	te := egressEngine(t)
	ctx := context.Background()
	image := busyboxImage(t, te, remove)
	info := te.create(t, sandbox.CreateRequest{Image: image, Network: sandbox.NetworkEgress})
	if r := te.command(t, info.ID, "echo hi from $(readlink /bin/sh)"); r.Stdout != "hi from /bin/busybox\n" {
		t.Errorf("execute_command: %+v", r)
	}
	if _, err := te.WriteFile(ctx, te.owner, info.ID, sandbox.WriteRequest{Path: "www/index.html", Data: []byte("served")}); err != nil {
		t.Fatal(err)
	}
	if f, err := te.ReadFile(ctx, te.owner, info.ID, "www/index.html", 0, 0); err != nil || string(f.Data) != "served" {
		t.Errorf("read_file: %q, %v", f.Data, err)
	}
	if l, err := te.ListFiles(ctx, te.owner, info.ID, ".", 2, false); err != nil || len(l.Entries) != 2 {
		t.Errorf("list_files: %+v, %v", l, err)
	}
	if _, err := te.ExecCommand(ctx, te.owner, info.ID, sandbox.CommandRequest{Command: "httpd -f -p 127.0.0.1:8000 -h /workspace/www", Background: true}); err != nil {
		t.Fatal(err)
	}
	fw, err := te.ExposePort(ctx, te.owner, info.ID, 8000, 0)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the BusyBox server to answer through the forward", func() bool {
		reply, err := get(fw.HostPort, 10*time.Second)
		return err == nil && strings.HasSuffix(reply, "served")
	})
	r := te.command(t, info.ID, "wget -q -O - http://"+mirror+"/debian/dists/bookworm/Release | head -n 1; wget -q -O - http://example.com/ 2>&1 | head -n 1")
	if !strings.HasPrefix(r.Stdout, "Origin: Debian\n") || !strings.Contains(r.Stdout, "403") {
		t.Errorf("BusyBox's wget through the gate: %+v; want the mirror's Release, and a 403 for example.com", r)
	}
}

// TestImageWithoutAShell: a sandbox from an image that holds one static
// program and no shell starts, its files can be written, read and listed,
// and a command fails with an error that says the image has no shell.
func TestImageWithoutAShell(t *testing.T) {
	remove := dockertest.RemoveImagesLater(t) // before the engine: see buildImage
	te := newTestEngine(t)
	ctx := context.Background()
	image := buildImage(t, te, remove, "noshell", map[string][]byte{"/app": dockertest.Agent(t).Binary}, "")
	info := te.create(t, sandbox.CreateRequest{Image: image})
	if _, err := te.WriteFile(ctx, te.owner, info.ID, sandbox.WriteRequest{Path: "data.txt", Data: []byte("kept")}); err != nil {
		t.Fatal(err)
	}
	if f, err := te.ReadFile(ctx, te.owner, info.ID, "data.txt", 0, 0); err != nil || string(f.Data) != "kept" {
		t.Errorf("read_file: %q, %v", f.Data, err)
	}
	if l, err := te.ListFiles(ctx, te.owner, info.ID, "/", 1, false); err != nil || !hasEntry(l, "app") {
		t.Errorf("list_files /: %+v, %v", l, err)
	}
	_, err := te.ExecCommand(ctx, te.owner, info.ID, sandbox.CommandRequest{Command: "echo hi"})
	if !errors.Is(err, sandbox.ErrUnsupported) || !strings.Contains(err.Error(), "no shell") {
		t.Errorf("execute_command in an image without a shell: %v; want an error saying so", err)
	}
}

func hasEntry(l sandbox.Listing, name string) bool {
	for _, e := range l.Entries {
		if e.Path == name {
			return true
		}
	}
	return false
}
