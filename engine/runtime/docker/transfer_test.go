package docker_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// binaryContent holds every byte value, NULs and invalid UTF-8 included.
func binaryContent() []byte {
	b := make([]byte, 64<<10)
	for i := range b {
		b[i] = byte(i ^ i>>8)
	}
	return b
}

func tarOf(t *testing.T, name string, content []byte, mode int64) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{Name: name, Mode: mode, Size: int64(len(content)), ModTime: time.Now(), Typeflag: tar.TypeReg}
	if err := tw.WriteHeader(hdr); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(content); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}

func TestCopyRoundTrip(t *testing.T) {
	c, id := newSandbox(t)
	ctx := testCtx(t)
	content := binaryContent()
	if err := c.CopyTo(ctx, id, "/workspace", tarOf(t, "data.bin", content, 0o640)); err != nil {
		t.Fatalf("CopyTo: %v", err)
	}

	// The process inside sees exactly the bytes sent.
	if got := run(t, c, id, "sha256sum", "/workspace/data.bin"); got[:64] != sha256Hex(content) {
		t.Errorf("sha256 inside the container %s, want %s", got[:64], sha256Hex(content))
	}

	rc, stat, err := c.CopyFrom(ctx, id, "/workspace/data.bin")
	if err != nil {
		t.Fatalf("CopyFrom: %v", err)
	}
	defer rc.Close()
	if stat.Name != "data.bin" || stat.Size != int64(len(content)) || fs.FileMode(stat.Mode).Perm() != 0o640 {
		t.Errorf("CopyFrom stat = %+v, want data.bin, %d bytes, mode 0640", stat, len(content))
	}
	tr := tar.NewReader(rc)
	hdr, err := tr.Next()
	if err != nil {
		t.Fatalf("read archive from CopyFrom: %v", err)
	}
	got, err := io.ReadAll(tr)
	if err != nil {
		t.Fatalf("read %s from archive: %v", hdr.Name, err)
	}
	if hdr.Name != "data.bin" || !bytes.Equal(got, content) {
		t.Errorf("archive entry %q with %d bytes, want data.bin with the %d bytes sent", hdr.Name, len(got), len(content))
	}
}

func TestStatPath(t *testing.T) {
	c, id := newSandbox(t)
	ctx := testCtx(t)
	run(t, c, id, "sh", "-c", "printf 12345 > /workspace/five && ln -s five /workspace/link")
	tests := []struct {
		path    string
		wantErr error
		check   func(s fs.FileMode, size int64, link string) bool
	}{
		{"/workspace/five", nil, func(m fs.FileMode, size int64, _ string) bool { return m.IsRegular() && size == 5 }},
		{"/workspace", nil, func(m fs.FileMode, _ int64, _ string) bool { return m.IsDir() }},
		{"/workspace/link", nil, func(m fs.FileMode, _ int64, link string) bool { return m&fs.ModeSymlink != 0 && link != "" }},
		{"/workspace/missing", sandbox.ErrNotFound, nil},
		{"/no/such/dir/file", sandbox.ErrNotFound, nil},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			st, err := c.StatPath(ctx, id, tc.path)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("StatPath(%s) = %+v, %v; want %v", tc.path, st, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("StatPath(%s): %v", tc.path, err)
			}
			if !tc.check(fs.FileMode(st.Mode), st.Size, st.LinkTarget) {
				t.Errorf("StatPath(%s) = %+v (mode %v)", tc.path, st, fs.FileMode(st.Mode))
			}
		})
	}
}

func TestCopyMissingPaths(t *testing.T) {
	c, id := newSandbox(t)
	ctx := testCtx(t)
	if err := c.CopyTo(ctx, id, "/no/such/dir", tarOf(t, "f", []byte("x"), 0o644)); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("CopyTo a missing directory: err = %v, want ErrNotFound", err)
	}
	if rc, _, err := c.CopyFrom(ctx, id, "/no/such/file"); !errors.Is(err, sandbox.ErrNotFound) {
		if rc != nil {
			rc.Close()
		}
		t.Errorf("CopyFrom a missing file: err = %v, want ErrNotFound", err)
	}
}
