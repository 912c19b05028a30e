package securitytest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostSecret is a file on the host, outside the allowed root, that no
// sandbox may read or overwrite.
func hostSecret(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte("HOST SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// noLinksOrSpecials fails if anything under dir is not a plain file or
// folder, has setuid/setgid/sticky bits or is writable by others, or holds
// the host secret.
func noLinksOrSpecials(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		info, _ := d.Info()
		mode := info.Mode()
		if !mode.IsRegular() && !mode.IsDir() {
			t.Errorf("copy wrote %s to the host: %s", mode.Type(), p)
		}
		if mode&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 || mode.Perm()&0o022 != 0 {
			t.Errorf("copy wrote %s with mode %s", p, mode)
		}
		if mode.IsRegular() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), "HOST SECRET") {
				t.Errorf("copy wrote the host secret into %s", p)
			}
		}
		return nil
	})
}

// TestCopyFromSandboxAttacks: what a sandbox puts in its files must not reach
// outside the destination on the host, whatever links, names and special
// files it holds.
func TestCopyFromSandboxAttacks(t *testing.T) {
	e := newEnv(t)
	c := e.client
	id := c.sandbox(t, nil)
	secret := hostSecret(t)

	t.Run("symlinks pointing outside", func(t *testing.T) {
		c.command(t, id, fmt.Sprintf(`mkdir -p out/sub && echo ok > out/ok.txt && ln -s /etc/passwd out/passwd && ln -s %s out/secret && `+
			`ln -s ../../../../../../../../%s out/sub/up && ln -s / out/rootdir && ln out/ok.txt out/hard`, secret, secret), 10)
		dst := filepath.Join(e.root, "out1")
		r := c.ok(t, "copy_from_sandbox", map[string]any{"sandbox_id": id, "path": "out", "host_path": dst})
		noLinksOrSpecials(t, dst)
		if b, err := os.ReadFile(filepath.Join(dst, "ok.txt")); err != nil || string(b) != "ok\n" {
			t.Errorf("the plain file was not copied: %q %v", b, err)
		}
		if skipped := r.data["skipped"]; skipped == nil || len(skipped.([]any)) < 4 || !strings.Contains(r.text, "link") {
			t.Errorf("the result does not list the skipped links: %s", r.text)
		}
		for _, name := range []string{"passwd", "secret", "sub/up", "rootdir"} {
			if _, err := os.Lstat(filepath.Join(dst, name)); err == nil {
				t.Errorf("%s was written to the host", name)
			}
		}
		// A lone symlink is refused outright, and nothing is left behind.
		dst2 := filepath.Join(e.root, "lone")
		c.refused(t, "copy_from_sandbox", map[string]any{"sandbox_id": id, "path": "out/secret", "host_path": dst2}, "link")
		if _, err := os.Lstat(dst2); err == nil {
			t.Errorf("a refused copy left %s behind", dst2)
		}
	})

	t.Run("dot-dot names", func(t *testing.T) {
		for _, hp := range []string{e.root + "/../escape", e.root + "/a/../../escape", filepath.Dir(e.root) + "/x/../escape"} {
			c.refused(t, "copy_from_sandbox", map[string]any{"sandbox_id": id, "path": "out/ok.txt", "host_path": hp}, "outside")
		}
		if _, err := os.Lstat(filepath.Join(filepath.Dir(e.root), "escape")); err == nil {
			t.Error("a ../ host path wrote outside the allowed root")
		}
		// ../ inside the sandbox stays inside the sandbox: / is its own root.
		dst := filepath.Join(e.root, "hostname")
		c.ok(t, "copy_from_sandbox", map[string]any{"sandbox_id": id, "path": "../../../../etc/hostname", "host_path": dst})
		host, _ := os.ReadFile("/etc/hostname")
		if got, _ := os.ReadFile(dst); string(got) == string(host) {
			t.Errorf("../ in the sandbox path read the host's /etc/hostname")
		}
	})

	t.Run("device files and fifos", func(t *testing.T) {
		c.command(t, id, `mkfifo fifo && mkdir -p devs && cp -a /dev/null /dev/zero /dev/full devs/ 2>/dev/null; echo x > devs/plain; ls -l devs`, 10)
		for _, p := range []string{"/dev/null", "/dev/zero", "fifo"} {
			c.refused(t, "copy_from_sandbox", map[string]any{"sandbox_id": id, "path": p, "host_path": filepath.Join(e.root, "dev-"+filepath.Base(p))}, "nothing copyable")
		}
		dst := filepath.Join(e.root, "devdir")
		r := c.ok(t, "copy_from_sandbox", map[string]any{"sandbox_id": id, "path": "/dev", "host_path": dst})
		noLinksOrSpecials(t, dst)
		if !strings.Contains(r.text, "special file not copied") {
			t.Errorf("copying /dev does not report the device files it skipped: %.400s", r.text)
		}
	})

	t.Run("setuid and world-writable files", func(t *testing.T) {
		c.command(t, id, `cp /usr/bin/id suid && chmod 6777 suid && mkdir -m 1777 sticky && echo x > sticky/f && chmod 666 sticky/f`, 10)
		for _, p := range []string{"suid", "sticky"} {
			dst := filepath.Join(e.root, "mode-"+p)
			c.ok(t, "copy_from_sandbox", map[string]any{"sandbox_id": id, "path": p, "host_path": dst})
			noLinksOrSpecials(t, dst)
		}
	})

	t.Run("symlink swapped in during the copy", func(t *testing.T) {
		// A background job swaps race/f between a file and links to the
		// host secret and out of the tree, as fast as it can, while the
		// copy runs again and again.
		c.command(t, id, `mkdir -p race/d && for i in $(seq 50); do echo $i > race/d/f$i; done`, 10)
		job := c.ok(t, "execute_command", map[string]any{"sandbox_id": id, "background": true, "timeout_s": 120,
			"command": fmt.Sprintf(`cd race; while :; do ln -sfn %s f.l; mv -Tf f.l f; echo data > f.r; mv -Tf f.r f; `+
				`ln -sfn /etc f.d; mv -Tf f.d d2; mkdir -p d3; mv -Tf d3 d2 2>/dev/null; done`, secret)})
		jobID := job.str("job_id")
		defer c.call(t, "job_stop", map[string]any{"job_id": jobID})
		before := rootEntries(t, e.root)
		for i := range 30 {
			dst := filepath.Join(e.root, fmt.Sprintf("race-%d", i))
			r := c.call(t, "copy_from_sandbox", map[string]any{"sandbox_id": id, "path": "race", "host_path": dst})
			if r.err != nil {
				t.Fatalf("try %d: %v", i, r.err)
			}
			noLinksOrSpecials(t, dst)
		}
		after := rootEntries(t, e.root)
		for name := range after {
			if !before[name] && !strings.HasPrefix(name, "race-") {
				t.Errorf("the racing copies left %s in the allowed root", name)
			}
		}
		if b, _ := os.ReadFile(secret); string(b) != "HOST SECRET" {
			t.Errorf("the host secret changed: %q", b)
		}
	})
}

func rootEntries(t *testing.T, dir string) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, e := range entries {
		names[e.Name()] = true
	}
	return names
}

// TestHostPathsOutsideRoots: every tool that takes a host path refuses one
// that is, or resolves through a symlink to, a place outside the roots.
func TestHostPathsOutsideRoots(t *testing.T) {
	e := newEnv(t)
	c := e.client
	id := c.sandbox(t, nil)
	secret := hostSecret(t)
	outside := filepath.Dir(secret)
	if err := os.Symlink(outside, filepath.Join(e.root, "out-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(e.root, "secret-link")); err != nil {
		t.Fatal(err)
	}
	for _, hp := range []string{secret, "/etc/passwd", e.root + "/../../../etc/passwd", filepath.Join(e.root, "out-link", "secret"),
		filepath.Join(e.root, "out-link"), filepath.Join(e.root, "secret-link")} {
		c.refused(t, "copy_to_sandbox", map[string]any{"sandbox_id": id, "host_path": hp}, "outside")
	}
	c.refused(t, "copy_to_sandbox", map[string]any{"sandbox_id": id, "host_path": "relative/path"}, "absolute")
	for _, hp := range []string{filepath.Join(outside, "new"), "/etc/sandtray-pwned", filepath.Join(e.root, "out-link", "new")} {
		c.refused(t, "copy_from_sandbox", map[string]any{"sandbox_id": id, "path": "/etc/hostname", "host_path": hp}, "outside")
		c.refused(t, "export_dockerfile", map[string]any{"sandbox_id": id, "host_path": hp}, "outside")
	}
	if _, err := os.Lstat(filepath.Join(outside, "new")); err == nil {
		t.Error("a refused copy wrote outside the roots")
	}
	// Inside the root, an existing file is never overwritten.
	keep := filepath.Join(e.root, "keep.txt")
	os.WriteFile(keep, []byte("mine"), 0o644)
	c.refused(t, "copy_from_sandbox", map[string]any{"sandbox_id": id, "path": "/etc/hostname", "host_path": keep}, "never overwrites")
	if b, _ := os.ReadFile(keep); string(b) != "mine" {
		t.Errorf("an existing host file was overwritten: %q", b)
	}
	// A folder copied in carries its symlinks as links, never their targets.
	dir := filepath.Join(e.root, "tree")
	os.Mkdir(dir, 0o755)
	os.Symlink(secret, filepath.Join(dir, "leak"))
	os.WriteFile(filepath.Join(dir, "plain"), []byte("plain"), 0o644)
	c.ok(t, "copy_to_sandbox", map[string]any{"sandbox_id": id, "host_path": dir})
	out := c.command(t, id, "cat tree/plain; echo; cat tree/leak 2>&1; readlink tree/leak", 10)
	if strings.Contains(out.stdout, "HOST SECRET") || !strings.Contains(out.stdout, "plain") {
		t.Errorf("copy_to_sandbox of a folder with a link out: %s", out.text)
	}
}

// TestRequestFarOverCap: a request far over the size cap is refused with a
// sentence, costs no more than the cap to read, and the engine goes on.
func TestRequestFarOverCap(t *testing.T) {
	e := newEnv(t)
	c := e.client
	id := c.sandbox(t, nil)
	huge := strings.Repeat("A", 4*e.cfg.Limits.MaxRequestBytes)
	r := c.call(t, "write_file", map[string]any{"sandbox_id": id, "path": "huge.txt", "content": huge})
	if r.err == nil && !r.isError {
		t.Fatalf("a %d MiB write_file was accepted", len(huge)>>20)
	}
	msg := r.text
	if r.err != nil {
		msg = r.err.Error()
	}
	if !strings.Contains(msg, "limit") {
		t.Errorf("the refusal does not name the limit: %.300s", msg)
	}
	out := c.command(t, id, "ls huge.txt 2>&1; true", 10)
	if !strings.Contains(out.stdout, "No such file") {
		t.Errorf("the oversize file was written: %s", out.text)
	}
	c.stillServes(t, id)
}
