package engine

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// replaceInits replaces, through tool calls as a model would make them (as
// root, the default image's user), /bin/sh, python3 and sleep with scripts
// that behave as before for every process but PID 1, and as PID 1 record
// that they ran there and run impostor instead: a python program of the
// sandbox's own. The real programs stay reachable (dash, python3.11,
// sleep.real), so the engine's execs and kernels still work.
func (te *testEngine) replaceInits(t *testing.T, id, impostor string) {
	t.Helper()
	ctx := context.Background()
	if _, err := te.WriteFile(ctx, te.owner, id, sandbox.WriteRequest{Path: "/root/impostor.py", Data: []byte(impostor)}); err != nil {
		t.Fatal(err)
	}
	r := te.command(t, id, `set -e
cp /usr/bin/sleep /usr/bin/sleep.real
w() { printf '#!/usr/bin/dash\nif [ $$ = 1 ]; then echo "$0" >> /tmp/pid1-ran; exec /usr/bin/python3.11 /root/impostor.py; fi\nexec %s "$@"\n' "$2" > "$1.new"
  chmod 755 "$1.new"; mv -f "$1.new" "$1"; }
w /usr/bin/python3 /usr/bin/python3.11
w /usr/bin/sleep /usr/bin/sleep.real
w /usr/bin/sh /usr/bin/dash
echo replaced`)
	if r.Stdout != "replaced\n" {
		t.Fatalf("replace the sandbox's programs: %+v", r)
	}
}

// pid1 is what the sandbox says of its PID 1: its command line, its start
// time (field 22 of its stat) and the signals it has handlers for.
func (te *testEngine) pid1(t *testing.T, id string) (cmdline, start, caught string) {
	t.Helper()
	r := te.command(t, id, `tr '\0\n' '  ' </proc/1/cmdline; echo; read -r s </proc/1/stat; set -- ${s##*) }; echo "${20}"; grep SigCgt /proc/1/status`)
	lines := strings.Split(r.Stdout, "\n")
	if len(lines) < 3 {
		t.Fatalf("PID 1: %+v", r)
	}
	return lines[0], lines[1], strings.TrimSpace(strings.TrimPrefix(lines[2], "SigCgt:"))
}

// hostExe is where PID 1's program is, as the host sees it (readable by
// root on the daemon's machine), or "" where it cannot be read.
func (te *testEngine) hostExe(t *testing.T, id string) string {
	t.Helper()
	raw, err := te.docker.InspectRaw(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ State struct{ Pid int } }
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Readlink("/proc/" + strconv.Itoa(doc.State.Pid) + "/exe")
	if err != nil {
		t.Logf("PID 1's program, from the host: %v (not checked)", err)
		return ""
	}
	return exe
}

// wantInit checks that the engine takes PID 1 of sandbox id for its own
// init (what the disk watch and the install's freeze rely on), sparing
// the first kernel's interpreter while kernel says that kernel lives.
func (te *testEngine) wantInit(t *testing.T, id string, kernel bool) {
	t.Helper()
	te.mu.Lock()
	b := te.boxes[id]
	te.mu.Unlock()
	pid1, err := te.initOf(context.Background(), b)
	if err != nil || !pid1.Ours || (pid1.Main > 0) != kernel {
		t.Errorf("the engine's view of PID 1: %+v, %v; want its own init, sparing a kernel: %v", pid1, err, kernel)
	}
}

// reaperCaught is the reaper's handled signals in /proc/1/status: none (it
// takes SIGCHLD, TERM, INT, HUP and QUIT blocked, with sigwait), where the
// supervisor has handlers.
const reaperCaught = "0000000000000000"

// TestFirstKernelInitRunsNothingOfTheSandboxs: in a python sandbox made on
// demand, code replaces /bin/sh, python3 and sleep with programs of its
// own, then ends the first kernel, whose supervisor is PID 1. PID 1 stays
// the same process running the same program, and reaps; the next call gets
// a new kernel.
func TestFirstKernelInitRunsNothingOfTheSandboxs(t *testing.T) {
	te := newTestEngine(t)
	te.attachFirst = true // also where the daemon is not Docker Engine (engine.go)
	id := te.create(t, sandbox.CreateRequest{}).ID
	if r := te.code(t, id, sandbox.CodeRequest{Code: "import os\nprint(os.getppid())"}); r.Stdout != "1\n" {
		t.Fatalf("first call: %+v; want the first kernel on the attachment", r)
	}
	cmdline, start, _ := te.pid1(t, id)
	exe := te.hostExe(t, id)
	te.wantInit(t, id, true)
	te.replaceInits(t, id, "import time\nwhile True:\n    time.sleep(1)\n")

	if r := te.code(t, id, sandbox.CodeRequest{Code: "import os\nos._exit(0)"}); r.ExitCode != 0 {
		t.Fatalf("end the first kernel: %+v", r)
	}
	var now, nowStart, caught string
	eventually(t, 10*time.Second, "PID 1 to be the reaper, or not to be Sandtray's any more", func() bool {
		now, nowStart, caught = te.pid1(t, id)
		return caught == reaperCaught || now != cmdline
	})
	if now != cmdline || nowStart != start || caught != reaperCaught {
		t.Errorf("after the first kernel ended, PID 1 runs %q (started at %s, handling %s); want %q, started at %s, the reaper",
			now, nowStart, caught, cmdline, start)
	}
	if after := te.hostExe(t, id); after != exe {
		t.Errorf("PID 1's program was %q, is %q", exe, after)
	}
	te.wantInit(t, id, false)
	if ran := te.command(t, id, "cat /tmp/pid1-ran 2>/dev/null").Stdout; ran != "" {
		t.Errorf("the sandbox's programs ran as PID 1: %q", ran)
	}
	if r := te.code(t, id, sandbox.CodeRequest{Code: "print(6 * 7)"}); r.Stdout != "42\n" || !r.KernelRestarted {
		t.Errorf("the next call: %+v; want a new kernel", r)
	}
	te.command(t, id, "sh -c 'sleep 0.1 & exit'; sh -c 'sleep 0.1 & exit'")
	eventually(t, 10*time.Second, "orphans reaped by PID 1", func() bool {
		return !strings.Contains(te.processesOf(t, id), " Z")
	})
}

// TestFirstKernelInitLoadsNoModuleOfTheSandboxs: code changes a module of
// the image's python that the supervisor (PID 1) would load once a run
// writes an image; the image comes back, and no process but the kernel's
// own runs the changed module.
func TestFirstKernelInitLoadsNoModuleOfTheSandboxs(t *testing.T) {
	te := newTestEngine(t)
	te.attachFirst = true
	id := te.create(t, sandbox.CreateRequest{}).ID
	r := te.command(t, id, `set -e
f=$(python3 -c 'import json; print(json.__file__)')
sed -i '1i import os as _o; open("/tmp/json-loaded-by", "a").write("%d\\n" % _o.getpid())' "$f"
rm -rf "$(dirname "$f")/__pycache__"; echo changed`)
	if r.Stdout != "changed\n" {
		t.Fatalf("change json: %+v", r)
	}
	r = te.code(t, id, sandbox.CodeRequest{Code: "import os\nos.makedirs('outputs', exist_ok=True)\n" +
		"open('outputs/a \"b\" é.png', 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n')\nprint(os.getppid())"})
	if r.Stdout != "1\n" || len(r.Images) != 1 || r.Images[0].Path != "/workspace/outputs/a \"b\" é.png" || r.Images[0].MIME != "image/png" || r.Images[0].Size != 8 {
		t.Fatalf("a run that writes an image: %+v", r)
	}
	if by := te.command(t, id, "cat /tmp/json-loaded-by 2>/dev/null").Stdout; strings.Contains("\n"+by, "\n1\n") {
		t.Errorf("PID 1 loaded the sandbox's json module (pids that did: %q)", by)
	}
}
