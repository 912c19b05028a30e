//go:build unix

package hostfs

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// archive is a Docker-style archive of one folder "top" holding files.
func archive(t *testing.T, files map[string]string) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "top/", Typeflag: tar.TypeDir, Mode: 0o755})
	for name, body := range files {
		tw.WriteHeader(&tar.Header{Name: "top/" + name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))})
		io.WriteString(tw, body)
	}
	tw.Close()
	return &buf
}

// fileArchive is a Docker-style archive of one file "top".
func fileArchive(body string) *bytes.Buffer {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "top", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))})
	io.WriteString(tw, body)
	tw.Close()
	return &buf
}

// TestExtractNeverReplacesWhatAppeared: a folder or file that appears at the
// destination after the engine checked it (a race) is never replaced; before,
// os.Rename replaced an empty folder and any file.
func TestExtractNeverReplacesWhatAppeared(t *testing.T) {
	for _, kind := range []string{"empty folder", "file", "file over file"} {
		t.Run(kind, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "dst")
			src := archive(t, map[string]string{"a": "sandbox"})
			if kind == "file over file" {
				src = fileArchive("sandbox")
			}
			if kind != "empty folder" {
				os.WriteFile(dst, []byte("mine"), 0o644)
			} else {
				os.Mkdir(dst, 0o755)
				os.WriteFile(filepath.Join(filepath.Dir(dst), "marker"), nil, 0o644)
			}
			_, err := Extract(src, dst, Limits{})
			if !errors.Is(err, sandbox.ErrConflict) {
				t.Fatalf("Extract over an existing %s: err = %v, want a conflict", kind, err)
			}
			if kind != "empty folder" {
				if b, _ := os.ReadFile(dst); string(b) != "mine" {
					t.Errorf("the user's file was replaced: %q", b)
				}
			} else if entries, _ := os.ReadDir(dst); len(entries) != 0 {
				t.Errorf("the user's folder was replaced: it now holds %d entries", len(entries))
			}
			if m, _ := filepath.Glob(filepath.Join(filepath.Dir(dst), ".sandtray-copy-*")); len(m) > 0 {
				t.Errorf("left %v behind", m)
			}
		})
	}
}

func TestRenameExclusive(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), []byte("new"), 0o644)
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	os.WriteFile(filepath.Join(dir, "d", "x"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "taken"), []byte("mine"), 0o644)
	os.Mkdir(filepath.Join(dir, "takendir"), 0o755)
	for _, tt := range []struct{ src, dst string }{{"f", "taken"}, {"d", "taken"}, {"f", "takendir"}, {"d", "takendir"}} {
		if err := renameExclusive(filepath.Join(dir, tt.src), filepath.Join(dir, tt.dst)); !isExist(err) {
			t.Errorf("renameExclusive(%s, %s) = %v, want it to refuse an existing name", tt.src, tt.dst, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "taken")); string(b) != "mine" {
		t.Errorf("taken was replaced: %q", b)
	}
	for _, tt := range []struct{ src, dst string }{{"f", "f2"}, {"d", "d2"}} {
		if err := renameExclusive(filepath.Join(dir, tt.src), filepath.Join(dir, tt.dst)); err != nil {
			t.Fatalf("renameExclusive(%s, %s): %v", tt.src, tt.dst, err)
		}
		if _, err := os.Lstat(filepath.Join(dir, tt.src)); err == nil {
			t.Errorf("%s is still there after the rename", tt.src)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "d2", "x")); string(b) != "x" {
		t.Errorf("the renamed folder lost its file: %q", b)
	}
}

func TestExtractLimits(t *testing.T) {
	files := map[string]string{"a": strings.Repeat("a", 600), "b": strings.Repeat("b", 600)}
	for _, tt := range []struct {
		lim  Limits
		want string
	}{
		{Limits{MaxBytes: 1000}, "limits.max_copy_bytes"},
		{Limits{MaxFiles: 2}, "limits.max_copy_files"},
	} {
		dst := filepath.Join(t.TempDir(), "dst")
		_, err := Extract(archive(t, files), dst, tt.lim)
		if !errors.Is(err, sandbox.ErrTooLarge) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Extract with %+v: err = %v, want a refusal naming %s", tt.lim, err, tt.want)
		}
		if _, err := os.Lstat(dst); err == nil {
			t.Errorf("a refused copy left %s", dst)
		}
	}
	if _, err := Extract(archive(t, files), filepath.Join(t.TempDir(), "dst"), Limits{MaxBytes: 1200, MaxFiles: 3}); err != nil {
		t.Errorf("a copy at its limits: %v", err)
	}
}

func TestCheckFree(t *testing.T) {
	dir := t.TempDir()
	free, err := freeBytes(dir)
	if err != nil || free <= 0 {
		t.Fatalf("freeBytes: %d, %v", free, err)
	}
	if err := CheckFree(dir, free); !errors.Is(err, sandbox.ErrTooLarge) || !strings.Contains(err.Error(), "free") {
		t.Errorf("writing all the free space: err = %v, want a refusal", err)
	}
	if err := CheckFree(dir, 1); err != nil && free > 2*reserveBytes {
		t.Errorf("writing one byte: %v", err)
	}
}

func TestWriteSparseKeepsHolesAndBytes(t *testing.T) {
	var want bytes.Buffer
	want.WriteString("head")
	want.Write(make([]byte, 3<<20))
	want.WriteString("middle")
	want.Write(make([]byte, 5000))
	want.WriteString("x")
	want.Write(make([]byte, 1<<20)) // a hole at the end: only the size says it
	f, err := os.Create(filepath.Join(t.TempDir(), "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := writeSparse(f, bytes.NewReader(want.Bytes()))
	if err != nil || n != int64(want.Len()) {
		t.Fatalf("writeSparse = %d, %v; want %d", n, err, want.Len())
	}
	got, _ := os.ReadFile(f.Name())
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("the file's bytes differ from the stream's (%d vs %d bytes)", len(got), want.Len())
	}
	var st syscall.Stat_t
	syscall.Stat(f.Name(), &st)
	if st.Blocks*512 > 64<<10 {
		t.Errorf("4 MiB holding 11 bytes takes %d bytes on disk", st.Blocks*512)
	}
}

// TestTarTreeNeverLeavesTheRoot: a file of the copied tree swapped, again and
// again, for a link to a secret outside it never sends the secret.
func TestTarTreeNeverLeavesTheRoot(t *testing.T) {
	base := t.TempDir()
	secret := filepath.Join(base, "secret")
	os.WriteFile(secret, []byte("HOST SECRET"), 0o600)
	src := filepath.Join(base, "tree")
	os.Mkdir(src, 0o755)
	f := filepath.Join(src, "f")
	os.WriteFile(f, []byte("plain"), 0o644)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			os.Symlink(secret, f+".l")
			os.Rename(f+".l", f)
			os.WriteFile(f+".r", []byte("plain"), 0o644)
			os.Rename(f+".r", f)
		}
	})
	defer func() { close(stop); wg.Wait() }()
	// The root is the tree itself, so the secret beside it is outside.
	for range 3000 {
		var buf bytes.Buffer
		var res sandbox.CopyResult
		TarTree(&buf, src, "tree", 0, 0, Limits{}, &res)
		if bytes.Contains(buf.Bytes(), []byte("HOST SECRET")) {
			t.Fatal("the tar stream carried the secret outside the copied tree")
		}
	}
}
