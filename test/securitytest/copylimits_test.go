//go:build unix

package securitytest

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sandtray/sandtray/engine/config"
)

// allocatedBytes is the space path takes on the host's disk.
func allocatedBytes(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatalf("stat %s: %v", path, err)
	}
	return st.Blocks * 512
}

// TestCopiesCannotFillTheHostDisk: a model cannot move more than
// limits.max_copy_bytes or limits.max_copy_files through copy_from_sandbox
// or copy_to_sandbox, and a sparse file stays sparse on the host.
func TestCopiesCannotFillTheHostDisk(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.Limits.MaxCopyFiles = 200 })
	c := e.client
	id := c.sandbox(t, nil)

	t.Run("a sparse file over the byte limit is refused", func(t *testing.T) {
		c.command(t, id, `truncate -s 1536M big.bin && printf tail >> big.bin`, 30)
		dst := filepath.Join(e.root, "big.bin")
		c.refused(t, "copy_from_sandbox", map[string]any{"sandbox_id": id, "path": "big.bin", "host_path": dst}, "limits.max_copy_bytes")
		if _, err := os.Lstat(dst); err == nil {
			t.Errorf("a refused copy left %s on the host (%d bytes on disk)", dst, allocatedBytes(t, dst))
		}
		// The same file inside a folder: refused as well, nothing left.
		c.command(t, id, `mkdir -p bigdir && mv big.bin bigdir/`, 30)
		dst = filepath.Join(e.root, "bigdir")
		c.refused(t, "copy_from_sandbox", map[string]any{"sandbox_id": id, "path": "bigdir", "host_path": dst}, "limits.max_copy_bytes")
		if _, err := os.Lstat(dst); err == nil {
			t.Errorf("a refused copy left %s on the host", dst)
		}
		leftovers(t, e.root)
	})

	t.Run("a sparse file under the limit stays sparse", func(t *testing.T) {
		c.command(t, id, `truncate -s 512M half.bin && printf data | dd of=half.bin bs=1 seek=1000 conv=notrunc 2>/dev/null && printf end >> half.bin`, 30)
		dst := filepath.Join(e.root, "half.bin")
		c.ok(t, "copy_from_sandbox", map[string]any{"sandbox_id": id, "path": "half.bin", "host_path": dst})
		st, err := os.Stat(dst)
		if err != nil || st.Size() != 512<<20+3 {
			t.Fatalf("copied file: %v, size %d, want %d", err, st.Size(), 512<<20+3)
		}
		if got := allocatedBytes(t, dst); got > 1<<20 {
			t.Errorf("a 512 MiB sparse file holding 7 bytes took %d bytes of the host's disk; want it kept sparse", got)
		}
		f, _ := os.Open(dst)
		defer f.Close()
		buf := make([]byte, 4)
		f.ReadAt(buf, 1000)
		tail := make([]byte, 3)
		f.ReadAt(tail, 512<<20)
		if string(buf) != "data" || string(tail) != "end" {
			t.Errorf("the sparse copy lost its data: %q at 1000, %q at the end", buf, tail)
		}
	})

	t.Run("more files than the file limit", func(t *testing.T) {
		c.command(t, id, `mkdir -p many && cd many && for i in $(seq 300); do : > f$i; done`, 60)
		dst := filepath.Join(e.root, "many")
		c.refused(t, "copy_from_sandbox", map[string]any{"sandbox_id": id, "path": "many", "host_path": dst}, "limits.max_copy_files")
		if _, err := os.Lstat(dst); err == nil {
			t.Errorf("a refused copy left %s on the host", dst)
		}
		hostMany := filepath.Join(e.root, "hostmany")
		os.Mkdir(hostMany, 0o755)
		for i := range 300 {
			os.WriteFile(filepath.Join(hostMany, fmt.Sprintf("f%d", i)), nil, 0o644)
		}
		c.refused(t, "copy_to_sandbox", map[string]any{"sandbox_id": id, "host_path": hostMany}, "limits.max_copy_files")
		if out := c.command(t, id, `ls hostmany 2>/dev/null | wc -l`, 10); out.stdout != "0\n" {
			t.Errorf("a refused copy_to_sandbox left %s files in the sandbox", out.stdout)
		}
	})

	t.Run("a host file over the byte limit is refused going in", func(t *testing.T) {
		src := filepath.Join(e.root, "hostbig.bin")
		f, err := os.Create(src)
		if err != nil {
			t.Fatal(err)
		}
		f.Truncate(1536 << 20)
		f.Close()
		c.refused(t, "copy_to_sandbox", map[string]any{"sandbox_id": id, "host_path": src}, "limits.max_copy_bytes")
		if st := c.command(t, id, `test -e hostbig.bin && echo present`, 10); st.stdout == "present\n" {
			t.Errorf("a refused copy_to_sandbox left hostbig.bin in the sandbox")
		}
	})
	c.stillServes(t, id)
}

// leftovers fails when a copy left a temporary folder in dir.
func leftovers(t *testing.T, dir string) {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(dir, ".sandtray-copy-*"))
	if len(matches) > 0 {
		t.Errorf("copies left temporary folders behind: %v", matches)
	}
}
