package securitytest

import (
	sbruntime "github.com/sandtray/sandtray/engine/runtime"

	"context"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// attack is one thing a model (or the code it runs) may try. run gets a
// fresh sandbox of its own and the client; the harness then checks that the
// engine still serves the bystander sandbox.
type attack struct {
	name string
	// create are extra create_sandbox arguments for the attacked sandbox.
	create map[string]any
	run    func(t *testing.T, e *env, id string)
}

// TestAttacks runs every attack under Docker's default runtime (runc).
func TestAttacks(t *testing.T) {
	t.Parallel() // beside TestAttacksGVisor: each has its own engine and sandboxes
	runAttacks(t, newEnv(t))
}

// runAttacks runs the attack table against e: each attack in a sandbox of
// its own, each followed by a call in a bystander sandbox that must still
// work, so one sandbox's attack never takes the engine down with it.
func runAttacks(t *testing.T, e *env) {
	// No fixed name: container names are global, and the gVisor run goes on
	// beside this one.
	bystander := e.client.sandbox(t, nil)
	e.client.stillServes(t, bystander)
	for _, a := range attacks() {
		t.Run(a.name, func(t *testing.T) {
			args := map[string]any{}
			for k, v := range a.create {
				args[k] = v
			}
			id := e.client.sandbox(t, args)
			t.Cleanup(func() { // also after a failure: a live fork bomb would slow every later case
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if err := e.eng.Delete(ctx, sandbox.Owner{}, id); err != nil {
					t.Errorf("delete the attacked sandbox: %v", err)
				}
			})
			a.run(t, e, id)
			e.client.stillServes(t, bystander)
		})
	}
}

func attacks() []attack {
	return []attack{
		{name: "fork bomb", run: forkBomb},
		{name: "fork bomb detached with setsid", run: detachedForkBomb},
		{name: "memory bomb", create: map[string]any{"memory_mb": 128}, run: memoryBomb},
		{name: "output flood", run: outputFlood},
		{name: "infinite loop", run: infiniteLoop},
		{name: "detached setsid nohup", run: detached},
		{name: "zombies", run: zombies},
		{name: "sysrq and core_pattern", run: procWrites},
		{name: "mount and unshare", run: mountUnshare},
		{name: "raw sockets", run: rawSockets},
		{name: "ptrace", run: ptraceOthers},
		{name: "setuid binary", run: setuidBinary},
		{name: "docker socket", run: dockerSocket},
		{name: "network egress", run: networkEgress},
		{name: "workdir under /proc/self/fd", run: procSelfFdWorkdir},
		{name: "ANSI escapes and invalid UTF-8", run: hostileOutput},
	}
}

// recovers checks that the attacked sandbox itself runs commands again
// within a few seconds of the attack's call returning.
func recovers(t *testing.T, e *env, id, after string) {
	t.Helper()
	eventually(t, 10*time.Second, "after "+after+", the sandbox still cannot run a command 10 s after the call returned", func() bool {
		r := e.client.call(t, "execute_command", map[string]any{"sandbox_id": id, "command": "echo alive", "timeout_s": 5})
		if last := execOf(r); r.err == nil && !r.isError && strings.TrimSpace(last.stdout) == "alive" {
			return true
		}
		t.Logf("after %s, not yet: %v", after, r)
		return false
	})
}

// processes lists "pid stat args" of every process in the sandbox that
// neither the sandbox (its init and sleep) nor Sandtray (its kernels, and
// the exec that lists them) started: what calls left running.
func processes(t *testing.T, e *env, id string) []string {
	t.Helper()
	out := e.client.command(t, id, `ps -eo pid=,stat=,args=`, 10)
	var left []string
	for _, line := range strings.Split(strings.TrimSpace(out.stdout), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] == "1" || strings.Join(f[2:], " ") == "sleep infinity" || strings.Contains(line, sbruntime.AgentPath) ||
			strings.Contains(line, "# Sandtray ") || strings.Contains(line, "ps -eo") || strings.Contains(line, "sandtray_sweep") {
			continue
		}
		if len(line) > 100 {
			line = line[:100]
		}
		left = append(left, strings.TrimSpace(line))
	}
	return left
}

func forkBomb(t *testing.T, e *env, id string) {
	// The call lasts while the bomb grows: the bash that starts it alone
	// returns at once, and on a busy host the call could end (and its sweep
	// kill the bomb) before a fork failed, leaving nothing to report.
	out := e.client.command(t, id, `bash -c ':(){ :|:& };:; sleep 3'`, 5)
	t.Logf("fork bomb: timed_out=%v exit=%d %.200s", out.timedOut, out.code, out.text)
	said := out.timedOut || strings.Contains(out.text, "Resource temporarily unavailable") || strings.Contains(out.text, "process limit")
	if !said && !e.gvisor() { // under gVisor the bomb dies quietly at the limit, leaving nothing to report
		t.Errorf("the fork bomb's result does not say it hit the process limit or timed out: %s", out.text)
	}
	// The bomb's processes outlive the bash that started them. Unless they
	// are killed when the call ends, they hold every pid and the sandbox is
	// unusable (docker exec itself fails to start).
	recovers(t, e, id, "a fork bomb")
	if ps := processes(t, e, id); len(ps) > 0 {
		t.Errorf("the fork bomb left %d processes behind: %s", len(ps), strings.Join(ps[:min(len(ps), 5)], "; "))
	}
}

// detachedForkBomb starts the bomb in a session of its own, out of the
// call's process group, and returns at once.
func detachedForkBomb(t *testing.T, e *env, id string) {
	// The sandbox's python kernel first, so that its start (two processes
	// of the agent's) is not taken for what the bomb left.
	e.client.ok(t, "execute_code", map[string]any{"sandbox_id": id, "code": "print(1)"})
	count := pids
	if e.gvisor() {
		count = pidsInside
	}
	before := count(t, e, id)
	out := e.client.command(t, id, `setsid bash -c ':(){ :|:& };:' >/dev/null 2>&1 & echo started`, 5)
	t.Logf("detached fork bomb: %s", out.text)
	// Wait until the bomb has filled the sandbox's process table, or the
	// call's sweep has brought the table back to what it was before.
	limit := int64(e.inspect(t, id)["HostConfig"].(map[string]any)["PidsLimit"].(float64))
	eventually(t, 30*time.Second, "the sandbox's process count settles after a detached fork bomb", func() bool {
		n := count(t, e, id)
		return n <= before || n >= limit*9/10
	})
	recovers(t, e, id, "a fork bomb detached with setsid")
	if ps := processes(t, e, id); len(ps) > 0 {
		t.Errorf("the detached fork bomb left %d processes behind: %s", len(ps), strings.Join(ps[:min(len(ps), 5)], "; "))
	}
}

// pids is how many processes the sandbox holds, as its cgroup counts them.
func pids(t *testing.T, e *env, id string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := e.docker.Stats(ctx, id)
	if err != nil {
		t.Fatalf("stats of %s: %v", id, err)
	}
	return int64(s.Pids)
}

// pidsInside is how many processes the sandbox holds, as its own /proc
// lists them (an exec's two among them), or the limit when it cannot say
// (a full process table fails the exec). Under gVisor the cgroup counts
// the sandbox kernel's threads, not the sandbox's processes.
func pidsInside(t *testing.T, e *env, id string) int64 {
	t.Helper()
	r := e.client.call(t, "execute_command", map[string]any{"sandbox_id": id, "command": "ls /proc | grep -c '^[0-9]'", "timeout_s": 5})
	n, err := strconv.ParseInt(strings.TrimSpace(execOf(r).stdout), 10, 64)
	if r.err != nil || r.isError || err != nil {
		return int64(e.inspect(t, id)["HostConfig"].(map[string]any)["PidsLimit"].(float64))
	}
	return n
}

func memoryBomb(t *testing.T, e *env, id string) {
	code := "a = []\nwhile True:\n    a.append(bytearray(10 ** 7))\n"
	out := e.client.code(t, id, "python", code, 15)
	t.Logf("memory bomb: %.400s", out.text)
	if out.code != 137 {
		t.Errorf("memory bomb: exit code %d, want 137 (SIGKILL from the OOM killer): %s", out.code, out.text)
	}
	if !strings.Contains(strings.ToLower(out.text), "killed for memory") {
		t.Errorf("memory bomb: the result does not tell the model it was killed for memory (its 128 MB limit): %s", out.text)
	}
	doc := e.inspect(t, id)
	hc := doc["HostConfig"].(map[string]any)
	if hc["Memory"].(float64) != 128<<20 || hc["MemorySwap"].(float64) != 128<<20 {
		t.Errorf("memory bomb: limits Memory=%v MemorySwap=%v, want both 128 MiB", hc["Memory"], hc["MemorySwap"])
	}
	recovers(t, e, id, "a memory bomb")
}

func outputFlood(t *testing.T, e *env, id string) {
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out := e.client.command(t, id, "yes 'flood flood flood flood flood'", 3)
	if !out.timedOut || !out.truncated {
		t.Errorf("output flood: timed_out=%v truncated=%v, want both: %.300s", out.timedOut, out.truncated, out.text)
	}
	limit := e.cfg.Limits.OutputBytes
	if len(out.stdout) > limit {
		t.Errorf("output flood: %d bytes of stdout reached the model, over the %d-byte cap", len(out.stdout), limit)
	}
	if !strings.Contains(out.text, "truncated") {
		t.Errorf("output flood: the text does not say the output was truncated: %.300s", out.text[max(0, len(out.text)-300):])
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 64<<20 {
		t.Errorf("output flood: the engine's heap grew by %d MiB", grew>>20)
	}
}

func infiniteLoop(t *testing.T, e *env, id string) {
	for _, c := range []struct{ lang, code string }{
		{"bash", "while true; do :; done"},
		{"python", "while True:\n    pass\n"},
	} {
		start := time.Now()
		out := e.client.code(t, id, c.lang, c.code, 2)
		if !out.timedOut || !strings.Contains(out.text, "timed out") {
			t.Errorf("%s infinite loop: want timed_out and a note, got %s", c.lang, out.text)
		}
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("%s infinite loop: a 2 s timeout took %s to return", c.lang, took)
		}
	}
	for _, p := range processes(t, e, id) {
		if strings.Contains(p, "main.sh") || strings.Contains(p, "main.py") {
			t.Errorf("infinite loop: still running after its timeout: %s", p)
		}
	}
}

func detached(t *testing.T, e *env, id string) {
	// A call's processes must not outlive it, whether it ran as a command or
	// on a kernel: background work has its own tool (background=true,
	// job_status, job_stop).
	calls := []struct{ how, lang, code string }{
		{"execute_command", "", `setsid nohup sleep 1001 >/dev/null 2>&1 & echo started`},
		{"the bash kernel", "bash", `setsid nohup sleep 1002 >/dev/null 2>&1 & echo started`},
		{"the python kernel", "python", "import subprocess\nsubprocess.Popen('setsid nohup sleep 1003 >/dev/null 2>&1 &', shell=True).wait()\nprint('started')"},
		{"the javascript kernel", "javascript", "require('child_process').spawn('sleep', ['1004'], {detached: true, stdio: 'ignore'}).unref(); console.log('started')"},
	}
	for i, c := range calls {
		var out execOut
		if c.lang == "" {
			out = e.client.command(t, id, c.code, 10)
		} else {
			out = e.client.code(t, id, c.lang, c.code, 10)
		}
		if strings.TrimSpace(out.stdout) != "started" {
			t.Fatalf("detach through %s: %s", c.how, out.text)
		}
		for _, p := range processes(t, e, id) {
			if strings.Contains(p, fmt.Sprintf("sleep %d", 1001+i)) {
				t.Errorf("a process detached through %s outlived its call: %q", c.how, p)
			}
		}
	}
}

func zombies(t *testing.T, e *env, id string) {
	// Children exit unwaited for; their parent exits too (they go to init),
	// or sleeps until its timeout kills it.
	code := "import os, time, sys\nfor i in range(50):\n    if os.fork() == 0:\n        os._exit(0)\n" +
		"if sys.argv[-1] == 'stay':\n    time.sleep(60)\n"
	e.client.code(t, id, "python", code, 10)
	e.client.ok(t, "execute_command", map[string]any{"sandbox_id": id, "timeout_s": 2,
		"command": "python3 -c \"" + strings.ReplaceAll(code, "\"", "\\\"") + "\" stay"})
	eventually(t, 5*time.Second, "zombies still there 5 s after their calls", func() bool {
		// A python kernel is stopped between its runs (kernelsrc's
		// supervisor.py), so what its code forked and that died after the
		// run's own reaping waits for its next run: one is made here.
		e.client.code(t, id, "python", "pass", 10)
		out := e.client.command(t, id, `ps -eo stat=,pid=,ppid=,comm= | grep '^Z' || true`, 10)
		left := strings.TrimSpace(out.stdout)
		if left != "" {
			t.Logf("zombies (stat pid ppid command): %.300s", left)
		}
		return left == ""
	})
}

func procWrites(t *testing.T, e *env, id string) {
	hostPattern, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
	for _, target := range []string{"/proc/sysrq-trigger", "/proc/sys/kernel/core_pattern", "/proc/sys/vm/drop_caches", "/sys/kernel/uevent_helper"} {
		payload := "c"
		if strings.HasSuffix(target, "core_pattern") || strings.HasSuffix(target, "uevent_helper") {
			payload = "|/tmp/pwn"
		}
		out := e.client.command(t, id, "printf '"+payload+"' > "+target+" && echo WROTE", 10)
		if strings.Contains(out.stdout, "WROTE") {
			t.Errorf("the sandbox could write %s: %s", target, out.text)
		}
		if out.stderr == "" {
			t.Errorf("writing %s failed silently; the model should see why: %s", target, out.text)
		}
	}
	if now, _ := os.ReadFile("/proc/sys/kernel/core_pattern"); string(now) != string(hostPattern) {
		t.Errorf("the host's core_pattern changed from %q to %q", hostPattern, now)
	}
}

func mountUnshare(t *testing.T, e *env, id string) {
	for _, cmd := range []string{
		"mount -t tmpfs none /mnt", "mount --bind /workspace /mnt", "mount -t proc proc /mnt",
		"unshare -r true", "unshare -m true", "unshare -n true", "unshare -U true",
		"python3 -c 'import os; os.chroot(\"/tmp\")'",
	} {
		out := e.client.command(t, id, cmd, 10)
		if e.gvisor() && strings.HasPrefix(cmd, "unshare") && (strings.Contains(cmd, "-r") || strings.Contains(cmd, "-U")) {
			// gVisor's own kernel implements user namespaces: they nest
			// inside the sandbox and give nothing on the host.
			continue
		}
		if out.code == 0 {
			t.Errorf("%q succeeded in a sandbox: %s", cmd, out.text)
		}
		if !e.gvisor() && !strings.Contains(strings.ToLower(out.stderr), "permi") {
			t.Errorf("%q: the model is not told it was not permitted: %s", cmd, out.text)
		}
	}
}

func rawSockets(t *testing.T, e *env, id string) {
	code := "import socket\nfor fam, typ, proto in [(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP), (socket.AF_PACKET, socket.SOCK_RAW, 0x0300)]:\n" +
		"    try:\n        socket.socket(fam, typ, proto)\n        print('OPENED', fam)\n    except OSError as e:\n        print('refused', e)\n"
	out := e.client.code(t, id, "python", code, 10)
	if strings.Contains(out.stdout, "OPENED") || strings.Count(out.stdout, "Operation not permitted") != 2 {
		t.Errorf("raw sockets: %s", out.text)
	}
}

func ptraceOthers(t *testing.T, e *env, id string) {
	// Only the sandbox's own processes are visible: no host pid exists here.
	ps := processes(t, e, id)
	for _, p := range ps {
		for _, host := range []string{"dockerd", "containerd", "securitytest.test", "go test"} {
			if strings.Contains(p, host) {
				t.Errorf("a host process is visible in the sandbox: %q", p)
			}
		}
	}
	code := "import ctypes, sys\nlibc = ctypes.CDLL(None, use_errno=True)\n" +
		"r = libc.ptrace(16, int(sys.argv[1]), 0, 0)\nprint(r, ctypes.get_errno())\n"
	hostPid := strconv.Itoa(os.Getpid())
	out := e.client.command(t, id, "python3 -c '"+code+"' "+hostPid+"; ls /proc/"+hostPid+"/root 2>&1 | head -3", 10)
	if !strings.HasPrefix(out.stdout, "-1 3\n") { // ESRCH: no such process in this pid namespace
		t.Errorf("ptrace of the test's host pid %s: want -1 ESRCH (3), got %s", hostPid, out.text)
	}
	// A sibling in the same sandbox may be traced (same uid, no capability
	// needed): it is inside the same trust boundary, which is the sandbox.
	out = e.client.command(t, id, "sleep 30 & python3 -c '"+code+"' $!; kill -9 $!", 10)
	t.Logf("ptrace of a sibling process in the same sandbox: %s", strings.TrimSpace(out.stdout))
}

func setuidBinary(t *testing.T, e *env, id string) {
	out := e.client.command(t, id, `grep -E '^(NoNewPrivs|CapEff|CapBnd|CapPrm)' /proc/self/status`, 10)
	if e.gvisor() && !strings.Contains(out.stdout, "NoNewPrivs") {
		out.stdout += "NoNewPrivs:\t1\n" // gVisor's /proc does not show it; CIS 5.26 checks the setting
	}
	for _, want := range []string{"NoNewPrivs:\t1", "CapEff:\t0000000000000000", "CapBnd:\t0000000000000000", "CapPrm:\t0000000000000000"} {
		if !strings.Contains(out.stdout, want) {
			t.Errorf("process status lacks %q:\n%s", want, out.stdout)
		}
	}
	// Root without capabilities cannot even become another user...
	out = e.client.command(t, id, `cp /usr/bin/id /tmp/rootid && chmod 4755 /tmp/rootid && setpriv --reuid=65534 --regid=65534 --clear-groups /tmp/rootid -u`, 10)
	if out.code == 0 || !strings.Contains(out.stderr, "not permitted") {
		t.Errorf("dropping to nobody without CAP_SETUID: %s", out.text)
	}
	// ...and a non-root process (as a non-root image or profile would run)
	// gains nothing from a setuid-root binary: no-new-privileges.
	got := e.execAs(t, id, "65534:65534", "/tmp/rootid", "-u")
	if strings.TrimSpace(got) != "65534" {
		t.Errorf("a setuid-root binary run by uid 65534 ran as euid %q, want 65534 (no-new-privileges)", strings.TrimSpace(got))
	}
	got = e.execAs(t, id, "65534:65534", "python3", "-c", "import os\ntry:\n    os.setuid(0)\n    print('ROOT')\nexcept OSError as e:\n    print(e)")
	if strings.Contains(got, "ROOT") {
		t.Errorf("uid 65534 became root: %s", got)
	}
}

func dockerSocket(t *testing.T, e *env, id string) {
	out := e.client.command(t, id, `find / -xdev \( -type s -o -name '*.sock' \) 2>/dev/null; `+
		`for s in /var/run/docker.sock /run/docker.sock /run/containerd/containerd.sock; do [ -e $s ] && echo "found $s"; done; env | grep -i docker_host; true`, 30)
	if strings.TrimSpace(out.stdout) != "" && !strings.Contains(out.stdout, "DOCKER_HOST") {
		t.Errorf("a container-runtime socket is visible in the sandbox: %s", out.text)
	}
	if strings.Contains(out.stdout, "DOCKER_HOST") {
		t.Errorf("DOCKER_HOST is set in the sandbox: %s", out.text)
	}
	if problem := (cisDoc{e.inspect(t, id)}).onlyAgent(); problem != "" {
		t.Errorf("the sandbox's mounts: %s", problem)
	}
}

func networkEgress(t *testing.T, e *env, id string) {
	code := "import socket\nfor host, port in [('1.1.1.1', 53), ('172.17.0.1', 2375), ('10.0.2.2', 80), ('deb.debian.org', 80)]:\n" +
		"    try:\n        socket.create_connection((host, port), timeout=2)\n        print('CONNECTED', host)\n" +
		"    except OSError as e:\n        print('failed', host, e)\n" +
		"s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ntry:\n    s.sendto(b'x', ('8.8.8.8', 53))\n    print('SENT udp')\nexcept OSError as e:\n    print('failed udp', e)\n" +
		"print(open('/proc/net/dev').read())\n"
	out := e.client.code(t, id, "python", code, 30)
	if strings.Contains(out.stdout, "CONNECTED") || strings.Contains(out.stdout, "SENT") {
		t.Errorf("a sandbox with network none reached out: %s", out.text)
	}
	ifaces := regexp.MustCompile(`(?m)^\s*(\w+):`).FindAllStringSubmatch(out.stdout, -1)
	for _, m := range ifaces {
		if m[1] != "lo" {
			t.Errorf("a sandbox with network none has interface %s", m[1])
		}
	}
	if doc := e.inspect(t, id); doc["HostConfig"].(map[string]any)["NetworkMode"] != "none" {
		t.Errorf("NetworkMode = %v, want none", doc["HostConfig"].(map[string]any)["NetworkMode"])
	}
}

// procSelfFdWorkdir tries the runc "leaky vessels" escape (CVE-2024-21626):
// an exec whose working directory is a file descriptor leaked from the host.
// Sandtray never hands a caller's workdir to Docker: the shell inside cds.
func procSelfFdWorkdir(t *testing.T, e *env, id string) {
	for fd := 3; fd <= 12; fd++ {
		for _, dir := range []string{"/proc/self/fd/" + strconv.Itoa(fd), "/proc/self/fd/" + strconv.Itoa(fd) + "/../../.."} {
			r := e.client.call(t, "execute_command", map[string]any{"sandbox_id": id, "workdir": dir,
				"command": "ls -a ../../../../../../ 2>&1; cat /proc/self/cgroup | head -1", "timeout_s": 10})
			if r.err != nil {
				t.Fatalf("workdir %s: %v", dir, r.err)
			}
			out := execOf(r)
			// Only the host has /work (this checkout); the sandbox's root has /workspace.
			if regexp.MustCompile(`(?m)^work$`).MatchString(out.stdout) {
				t.Errorf("workdir %s reached the host's filesystem: %s", dir, out.text)
			}
		}
	}
	r := e.client.call(t, "execute_command", map[string]any{"sandbox_id": id, "workdir": "/proc/self/fd/7", "command": "pwd"})
	if out := execOf(r); out.code == 0 && !r.isError {
		t.Errorf("workdir /proc/self/fd/7: want a failed cd the model can read, got %s", out.text)
	}
}

// hostileOutput prints ANSI escapes (colour, a window title, a clear screen,
// OSC 52 clipboard writes) and invalid UTF-8. Every byte the model's client
// receives must be valid UTF-8 JSON, and no terminal control sequence may
// reach it: a client that shows tool output in a terminal (or the GUI) would
// otherwise let sandboxed code rewrite what the user sees.
func hostileOutput(t *testing.T, e *env, id string) {
	code := `import sys
payload = b"\x1b[31mred\x1b[0m \x1b]0;pwned title\x07 \x1b]52;c;cm0gLXJmIH4=\x07 \x1b[2J\x1b[H \x9b31m \x07bell \xff\xfe\xc3( broken \xe2\x82"
sys.stdout.buffer.write(payload + b"\n")
sys.stderr.buffer.write(payload + b"\n")
`
	out := e.client.code(t, id, "python", code, 10)
	for _, line := range e.client.tap.lines() {
		if !utf8Valid(line) {
			t.Errorf("the server sent invalid UTF-8: %q", line)
		}
		if !jsonValid(line) {
			t.Errorf("the server sent a line that is not JSON: %q", line)
		}
	}
	if !strings.Contains(out.stdout, "\uFFFD") || !strings.Contains(out.stdout, "broken") {
		t.Errorf("invalid UTF-8 should arrive as U+FFFD with the text around it kept: %q", out.stdout)
	}
	for name, s := range map[string]string{"stdout": out.stdout, "stderr": out.stderr, "text": out.text} {
		if c := firstControl(s); c >= 0 {
			t.Errorf("%s carries terminal control character %U to the model; escapes must be stripped (colour) or shown visibly: %q", name, c, s)
		}
	}
	// File names are identifiers the model passes back, so list_files keeps
	// them exact (JSON escapes the control characters).
	e.client.command(t, id, `python3 -c 'open("/workspace/a\x1b[31mb", "w")'`, 10)
	r := e.client.ok(t, "list_files", map[string]any{"sandbox_id": id})
	if !strings.Contains(r.text, "a") || len(r.data["entries"].([]any)) == 0 {
		t.Fatalf("list_files: %s", r.text)
	}
	if p := r.data["entries"].([]any)[0].(map[string]any)["path"]; p != "a\x1b[31mb" {
		t.Errorf("list_files path = %q, want the exact name", p)
	}
}

// firstControl returns the first C0 or C1 control character in s other
// than tab and newline, or -1.
func firstControl(s string) rune {
	for _, r := range s {
		if (r < 0x20 && r != '\t' && r != '\n') || (r >= 0x7f && r <= 0x9f) {
			return r
		}
	}
	return -1
}
