package httptoken

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestEnsureCreatesAPrivateTokenOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandtray", FileName)
	f := Open(path)
	tok, err := f.Ensure()
	if err != nil {
		t.Fatal(err)
	}
	if len(tok) != 43 || strings.ContainsAny(tok, "+/=") {
		t.Errorf("token %q: want 43 URL-safe characters (32 bytes)", tok)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("token file mode %04o, want 0600", perm)
	}
	if dir, _ := os.Stat(filepath.Dir(path)); dir.Mode().Perm() != 0o700 {
		t.Errorf("config dir mode %04o, want 0700", dir.Mode().Perm())
	}
	again, err := Open(path).Ensure()
	if err != nil || again != tok {
		t.Errorf("second Ensure = %q, %v; want the same token", again, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("left temporary files behind: %v", entries)
	}
}

func TestConcurrentFirstRunsAgreeOnOneToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	toks := make([]string, 8)
	var wg sync.WaitGroup
	for i := range toks {
		wg.Go(func() {
			tok, err := Open(path).Ensure()
			if err != nil {
				t.Error(err)
			}
			toks[i] = tok
		})
	}
	wg.Wait()
	for _, tok := range toks[1:] {
		if tok != toks[0] {
			t.Fatalf("racing first runs got different tokens: %q", toks)
		}
	}
}

func TestRotateReplacesTheTokenAReaderSees(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	server := Open(path)
	old, err := server.Ensure()
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := Open(path).Rotate() // another process: `sandtray token --rotate`
	if err != nil {
		t.Fatal(err)
	}
	if fresh == old {
		t.Fatal("rotate kept the token")
	}
	if got, err := server.Current(); err != nil || got != fresh {
		t.Errorf("the server still reads %q, %v; want the rotated token", got, err)
	}
}

func TestCurrentRefusesTokensOthersCanRead(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]struct {
		content string
		mode    os.FileMode
		want    string
	}{
		"world readable": {"QkFEQkFEQkFEQkFEQkFEQkFEQkFEQkFEQkFEQkFEQkFE", 0o644, "--rotate"},
		"not a token":    {"hunter2", 0o600, "does not hold a token"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, []byte(c.content), c.mode); err != nil {
				t.Fatal(err)
			}
			os.Chmod(path, c.mode)
			_, err := Open(path).Current()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Current() error = %v, want one mentioning %q", err, c.want)
			}
		})
	}
	if _, err := Open(filepath.Join(dir, "missing")).Current(); !os.IsNotExist(err) && err == nil {
		t.Errorf("a missing file must be an error")
	}
}

// TestCurrentNoticesAChmodWhileRunning (F39): a server that read the token
// refuses it once the file turns readable by others, though its content,
// size, mtime and inode are unchanged; made private again, it works again.
func TestCurrentNoticesAChmodWhileRunning(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	server := Open(path)
	tok, err := server.Ensure()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := server.Current(); err == nil || !strings.Contains(err.Error(), "other users can read it") {
		t.Errorf("after chmod 644: Current() = %q, %v; want a refusal", got, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := server.Current(); err != nil || got != tok {
		t.Errorf("after chmod 600: Current() = %q, %v; want the token", got, err)
	}
}
