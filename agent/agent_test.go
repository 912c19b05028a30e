//go:build linux

package agent

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// files writes a tree of files under a temporary root.
func files(t *testing.T, tree map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, data := range tree {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func withRoot(t *testing.T, dir string) {
	old := root
	root = dir
	t.Cleanup(func() { root = old })
}

const dpkgStatus = `Package: jq
Status: install ok installed
Architecture: amd64
Version: 1.6-2.1

Package: gone
Status: deinstall ok config-files
Version: 1.0

Package: libc6
Status: install ok installed
Architecture: amd64
Version: 2.36-9
`

func TestVersionsReadTheManagersDatabases(t *testing.T) {
	withRoot(t, files(t, map[string]string{
		"var/lib/dpkg/status":  dpkgStatus,
		"lib/apk/db/installed": "P:busybox\nV:1.36.1-r15\n\nP:jq\nV:1.7.1-r0\n",
		"usr/local/lib/python3.11/dist-packages/ruamel.yaml-0.18.6.dist-info/METADATA": "Metadata-Version: 2.1\nName: ruamel.yaml\nVersion: 0.18.6\n\nName: not-this\n",
		"usr/local/lib/node_modules/@types/node/package.json":                          `{"name":"@types/node","version":"20.1.0"}`,
	}))
	for _, tt := range []struct {
		manager string
		names   []string
		want    string
	}{
		{"apt", []string{"jq", "gone", "libc6:amd64", "nope"}, "jq\t1.6-2.1\nlibc6:amd64\t2.36-9\n"},
		{"apk", []string{"jq", "busybox"}, "jq\t1.7.1-r0\nbusybox\t1.36.1-r15\n"},
		{"pip", []string{"ruamel-yaml", "Ruamel_YAML", "numpy"}, "ruamel-yaml\t0.18.6\nRuamel_YAML\t0.18.6\n"},
		{"npm", []string{"@types/node", "left-pad", "../../etc"}, "@types/node\t20.1.0\n"},
	} {
		var out, errOut bytes.Buffer
		if code := versionsCmd(append([]string{tt.manager}, tt.names...), &out, &errOut); code != 0 {
			t.Fatalf("%s: exit %d: %s", tt.manager, code, errOut.String())
		}
		if diff := cmp.Diff(tt.want, out.String()); diff != "" {
			t.Errorf("versions %s %q (-want +got):\n%s", tt.manager, tt.names, diff)
		}
	}
}

func TestDpkgReport(t *testing.T) {
	sum := md5.Sum([]byte("original"))
	dir := files(t, map[string]string{
		"var/lib/dpkg/status":          dpkgStatus,
		"var/lib/dpkg/info/jq.list":    "/usr/bin/jq\n/usr/share/doc/jq\n",
		"var/lib/dpkg/info/jq.md5sums": hex.EncodeToString(sum[:]) + "  usr/bin/jq\n" + hex.EncodeToString(sum[:]) + "  usr/share/doc/jq/README\n",
		"usr/bin/jq":                   "original",
		"usr/share/doc/jq/README":      "changed",
		"var/lib/apt/extended_states":  "Package: libc6\nArchitecture: amd64\nAuto-Installed: 1\n",
	})
	withRoot(t, dir)
	var out bytes.Buffer
	dpkgReportCmd([]string{"jq", "../../etc/passwd"}, &out)
	want := "O /usr/bin/jq\nO /usr/share/doc/jq\nM /usr/share/doc/jq/README\nV jq\t1.6-2.1\nU jq\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("dpkgreport (-want +got):\n%s", diff)
	}
}

// child starts a process of this host to play a sandbox's.
func child(t *testing.T, script string, env ...string) *exec.Cmd {
	t.Helper()
	c := exec.Command("/bin/sh", "-c", script)
	c.Env = append(os.Environ(), env...)
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	return c
}

func alive(pid int) bool {
	st, ok := readStat(pid)
	return ok && st.state != 'Z' && st.state != 'X'
}

func waitDead(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); alive(pid); {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSweepKillsTheGroupAndTheMarked: what leads a group given, and what
// carries the marker (in another group, detached), are killed; others live.
func TestSweepKillsTheGroupAndTheMarked(t *testing.T) {
	group := child(t, "sleep 300")
	marked := child(t, "sleep 300", "SANDTRAY_EXEC=m42")
	other := child(t, "sleep 300", "SANDTRAY_EXEC=m43")
	if n := sweep([]int{group.Process.Pid}, "m42", 0); n < 2 {
		t.Errorf("sweep killed %d processes, want at least the group's and the marked one", n)
	}
	waitDead(t, group.Process.Pid)
	waitDead(t, marked.Process.Pid)
	if !alive(other.Process.Pid) {
		t.Error("sweep killed a process of another marker")
	}
}

// TestThawContinuesOnlyThatProcess: the thaw continues a stopped process
// given with its start time, and not one whose start time differs (its pid
// was reused). (The freeze pass itself stops every process of its pid
// namespace it may signal: it runs only in a sandbox, in the engine's
// tests.)
func TestThawContinuesOnlyThatProcess(t *testing.T) {
	c := child(t, "sleep 300")
	pid := c.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	st, _ := readStat(pid)
	for deadline := time.Now().Add(5 * time.Second); st.state != 'T' && time.Now().Before(deadline); st, _ = readStat(pid) {
		time.Sleep(5 * time.Millisecond)
	}
	var out bytes.Buffer
	thawCmd([]string{strconv.Itoa(pid), strconv.FormatUint(st.start+1, 10)}, &out)
	if out.String() != "resumed 0\n" {
		t.Errorf("a thaw of another start time said %q, want resumed 0", out.String())
	}
	out.Reset()
	thawCmd([]string{strconv.Itoa(pid), strconv.FormatUint(st.start, 10)}, &out)
	if out.String() != "resumed 1\n" {
		t.Errorf("thaw said %q, want resumed 1", out.String())
	}
}

func TestWorkdirFallsBackToRoot(t *testing.T) {
	if dir, notice := workdir(t.TempDir()); dir == "/" || notice != "" {
		t.Errorf("an existing folder: %q, %q", dir, notice)
	}
	if dir, notice := workdir("/nonexistent/x"); dir != "/" || !strings.Contains(notice, "cannot enter the workdir /nonexistent/x") {
		t.Errorf("a missing folder: %q, %q", dir, notice)
	}
}

func TestMergeEnvLaterWins(t *testing.T) {
	got := mergeEnv([]string{"A=1", "PATH=/bin", "B=2"}, []string{"PATH=/usr/bin", "C=3"})
	if diff := cmp.Diff([]string{"A=1", "PATH=/usr/bin", "B=2", "C=3"}, got); diff != "" {
		t.Errorf("mergeEnv (-want +got):\n%s", diff)
	}
}
