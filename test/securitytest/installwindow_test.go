package securitytest

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"
)

// probe tries to reach the Debian mirror (what an install reaches; its
// addresses are the arguments after the name, as resolving in the sandbox
// can hang for longer than an install) in a loop: it counts its tries in
// /tmp/tries-<name>, replaced whole (a file written in place reads empty
// for an instant), and appends the time of each connection that worked to
// /tmp/reached-<name>.
const probe = `import os, socket, sys, time
name, addrs = sys.argv[1], sys.argv[2:]
n = 0
while True:
    n += 1
    with open("/tmp/tries-" + name + ".new", "w") as f:
        f.write(str(n))
    os.replace("/tmp/tries-" + name + ".new", "/tmp/tries-" + name)
    for a in addrs:
        try:
            socket.create_connection((a, 80), timeout=0.5).close()
            with open("/tmp/reached-" + name, "a") as f:
                f.write("%.3f\n" % time.time())
        except OSError:
            time.sleep(0.01)
`

// TestInstallWindowIsTheInstallersAlone: while install_packages puts an
// offline sandbox on the network, nothing but the installer may use it
// (issue 11, item 6). A background job, and a process it detached into a
// session of its own without the call's marker (setsid env -i), loop trying
// to reach the package mirror next to a shell that forks all the time, and
// another session makes calls that try it too. During the install none
// reaches it; afterwards the loops run on, a kernel keeps its state, and the
// sandbox is offline again. Both as root and as a non-root sandbox.user.
func TestInstallWindowIsTheInstallersAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("installs from the Debian mirror")
	}
	addrs, err := net.LookupHost("deb.debian.org")
	if err != nil || len(addrs) == 0 {
		t.Skipf("deb.debian.org does not resolve here (%v): no mirror to install from", err)
	}
	mirror := strings.Join(addrs, " ")
	for _, user := range []string{"", "1000:1000"} { // root may signal only root's processes: no capabilities
		t.Run("sandbox.user="+user, func(t *testing.T) { installWindow(t, user, mirror) })
	}
}

func installWindow(t *testing.T, user, mirror string) {
	e := newEnv(t, func(c *config.Config) { c.Pool.Size = 0; c.Sandbox.User = user })
	c := e.client
	id := c.sandbox(t, nil)
	c.ok(t, "write_file", map[string]any{"sandbox_id": id, "path": "/tmp/probe.py", "content": probe})
	job := c.ok(t, "execute_command", map[string]any{"sandbox_id": id, "background": true, "timeout_s": 600,
		"command": "setsid env -i /usr/bin/python3 /tmp/probe.py hidden " + mirror + " </dev/null >/dev/null 2>&1 & " +
			"while :; do /bin/true; sleep 0.01; done & exec python3 /tmp/probe.py job " + mirror})
	jobID := job.str("job_id")
	if jobID == "" {
		t.Fatalf("the background command did not become a job: %s", job.text)
	}
	defer c.call(t, "job_stop", map[string]any{"job_id": jobID})
	tries := func() string {
		return c.command(t, id, `echo $(cat /tmp/tries-job) $(cat /tmp/tries-hidden)`, 10).stdout
	}
	eventually(t, 30*time.Second, "both probes to run", func() bool { return len(strings.Fields(tries())) == 2 })

	c.code(t, id, "python", "x = 41", 30) // a kernel, stopped between its runs

	// Another session calls in a loop while the install runs: each call
	// tries the mirror once; it must wait for the install, or run offline.
	other := e.connect(t)
	once := "python3 -c 'import socket, sys\nfor a in sys.argv[1:]:\n  try: socket.create_connection((a, 80), timeout=0.5).close(); print(\"reached\")\n  except OSError: pass' " + mirror
	installing := make(chan struct{})
	var calls []result
	var looped sync.WaitGroup
	looped.Add(1)
	go func() {
		defer looped.Done()
		for {
			select {
			case <-installing:
				return
			default:
			}
			calls = append(calls, other.call(t, "execute_command", map[string]any{"sandbox_id": id, "command": once, "timeout_s": 30}))
		}
	}()
	r := c.ok(t, "install_packages", map[string]any{"sandbox_id": id, "packages": []string{"jq"}, "manager": "apt", "timeout_s": 300})
	close(installing)
	looped.Wait()
	t.Logf("%d calls of another session during the install; install: %.60s", len(calls), r.text)
	online := 0
	for _, call := range calls {
		if out := execOf(call); call.err != nil || call.isError || out.code != 0 {
			t.Errorf("a call during the install failed: %v", call)
		} else if strings.Contains(out.stdout, "reached") {
			online++
		}
	}
	if online > 0 {
		t.Errorf("%d of the %d calls made during the install reached deb.debian.org", online, len(calls))
	}

	reached := c.command(t, id, `for n in job hidden; do echo $n: $(cat /tmp/reached-$n 2>/dev/null | wc -l); done`, 10).stdout
	if reached != "job: 0\nhidden: 0\n" {
		t.Errorf("background processes reached deb.debian.org during the install; connections that worked: %s", strings.Join(strings.Fields(reached), " "))
	}
	if out := c.command(t, id, "jq -n 1+1", 10); strings.TrimSpace(out.stdout) != "2" {
		t.Errorf("jq was not installed: %v", out.result)
	}
	before := strings.Fields(tries())
	eventually(t, 30*time.Second, "both probes to run on after the install", func() bool {
		after := strings.Fields(tries())
		return len(after) == 2 && len(before) == 2 && after[0] != before[0] && after[1] != before[1]
	})
	if out := c.code(t, id, "python", "print(x + 1)", 30); strings.TrimSpace(out.stdout) != "42" {
		t.Errorf("the kernel did not keep its state through the install: %v", out.result)
	}
	if nets := e.inspect(t, id)["NetworkSettings"].(map[string]any)["Networks"].(map[string]any); len(nets) != 1 || nets["none"] == nil {
		t.Errorf("the sandbox is still on a network after the install: %v", nets)
	}
	if st := c.ok(t, "job_status", map[string]any{"job_id": jobID}); st.str("status") != "running" {
		t.Errorf("the background job did not survive the install: %s", st.text)
	}
}
