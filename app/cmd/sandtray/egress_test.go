package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/internal/testwait"
	"github.com/sandtray/sandtray/test/dockertest"
)

// fetchScript fetches its argument with Python's urllib (which reads
// http_proxy) and prints the status and the body's first line.
const fetchScript = `import sys,urllib.request,urllib.error
try:
    r=urllib.request.urlopen(sys.argv[1],timeout=60);print(r.status,r.read(100).decode().splitlines()[0])
except urllib.error.HTTPError as e:
    print(e.code,e.read().decode().strip())`

// TestEgressCommandAnswersTheGate: with egress.ask on, a sandbox's request
// for an unlisted host waits; `sandtray egress pending` shows it,
// `sandtray egress allow` lets it through, `sandtray egress deny` refuses
// it at once, and one nobody answers is refused at egress.ask_timeout; the
// sandbox's log names each decision. Through the real binaries.
func TestEgressCommandAnswersTheGate(t *testing.T) {
	image := dockertest.Image(t)
	env := socketEnv(t, image)
	home := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	cfg := filepath.Join(home, ".config", "sandtray", "config.toml")
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "[egress]\nask = true\nask_timeout = \"6s\"\nallow = []")
	f.Close()
	t.Cleanup(func() { stopEngine(t) })
	c := connectShim(t, env, "egress-test", "2025-11-25")
	made := c.call("create_sandbox", map[string]any{"name": "gated", "network": "egress"})
	if made["network"] != "egress" {
		t.Fatalf("created %v", made)
	}
	c.call("execute_command", map[string]any{"sandbox_id": "gated", "command": "true"}) // warm

	const url = "http://deb.debian.org/debian/dists/bookworm/Release"
	fetch := func() <-chan string {
		out := make(chan string, 1)
		go func() {
			res := c.try("execute_command", map[string]any{"sandbox_id": "gated", "timeout_s": 90,
				"command": fmt.Sprintf("python3 -c '%s' %s", fetchScript, url)})
			out <- fmt.Sprint(res.StructuredContent)
		}()
		return out
	}
	waitPending := func() {
		t.Helper()
		testwait.Eventually(t, 20*time.Second, "`sandtray egress pending` to list the request", func() bool {
			out, _ := runWithEnv(env, binary, "egress", "pending")
			return strings.Contains(out, "gated") && strings.Contains(out, "deb.debian.org") && strings.Contains(out, "80")
		})
	}

	got := fetch()
	waitPending()
	if out, err := runWithEnv(env, binary, "egress", "allow", "gated", "deb.debian.org"); err != nil || !strings.Contains(out, "allowed once") {
		t.Fatalf("egress allow: %q %v", out, err)
	}
	if r := <-got; !strings.Contains(r, "200 Origin: Debian") {
		t.Fatalf("allowed: %s", r)
	}

	got = fetch()
	waitPending()
	denied := time.Now()
	if out, err := runWithEnv(env, binary, "egress", "deny", "gated", "deb.debian.org:80"); err != nil || !strings.Contains(out, "denied") {
		t.Fatalf("egress deny: %q %v", out, err)
	}
	if r := <-got; !strings.Contains(r, "403 sandtray egress: deb.debian.org:80 was denied by the user") || time.Since(denied) > 5*time.Second {
		t.Fatalf("denied: %s after %s", r, time.Since(denied))
	}

	start := time.Now()
	if r := <-fetch(); !strings.Contains(r, "got no answer from the user within 6s") || time.Since(start) < 6*time.Second {
		t.Fatalf("unanswered: %s after %s", r, time.Since(start))
	}

	logs := fmt.Sprint(c.call("sandbox_logs", map[string]any{"sandbox_id": "gated", "tail": 50}))
	for _, want := range []string{
		"GET deb.debian.org:80: allow by allowed once by the user",
		"GET deb.debian.org:80: deny by denied by the user",
		"GET deb.debian.org:80: deny by no answer",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("sandbox_logs lack %q: %s", want, logs)
		}
	}
	if out, _ := runWithEnv(env, binary, "egress", "pending"); !strings.Contains(out, "Nothing waits") {
		t.Errorf("still pending: %q", out)
	}
	out, err := runWithEnv(env, binary, "egress", "allow", "gated", "deb.debian.org", "--always")
	if err != nil || !strings.Contains(out, "allowed for sandbox gated from now on") {
		t.Fatalf("allow --always: %q %v", out, err)
	}
	if r := <-fetch(); !strings.Contains(r, "200 Origin: Debian") {
		t.Fatalf("after allow --always: %s", r)
	}
	if list := fmt.Sprint(c.call("list_sandboxes", nil)); !strings.Contains(list, "egress_allow:[deb.debian.org]") {
		t.Errorf("list_sandboxes lacks the sandbox's rule: %s", list)
	}
}
