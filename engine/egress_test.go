package engine

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/testwait"
)

// The egress gate against the real daemon: issue 24's "Done when".

// mirror is the Debian mirror the test image's apt sources name.
const mirror = "deb.debian.org"

// fetchPy fetches url with Python's urllib (which reads http_proxy) and
// prints the status and the body's first line, or the HTTP error's.
const fetchPy = `import sys,time,urllib.request,urllib.error
t=time.time()
print("started %.3f"%t)
try:
    r=urllib.request.urlopen(sys.argv[1],timeout=30);print(r.status,r.read(200).decode(errors="replace").splitlines()[0])
except urllib.error.HTTPError as e:
    print(e.code,e.read().decode(errors="replace").strip())
except Exception as e:
    print("error",e)
print("took %.2f"%(time.time()-t))`

func fetch(t *testing.T, te *testEngine, id, url string) (status, body string, took time.Duration) {
	t.Helper()
	status, body, took, _ = fetchAt(t, te, id, url)
	return status, body, took
}

// fetchAt is fetch, also saying when (by the sandbox's clock, the host's)
// the request started.
func fetchAt(t *testing.T, te *testEngine, id, url string) (status, body string, took time.Duration, started time.Time) {
	t.Helper()
	out, err := te.ExecCommand(context.Background(), te.owner, id, sandbox.CommandRequest{
		Command: fmt.Sprintf("python3 -c '%s' %s", fetchPy, url), Timeout: 2 * time.Minute, Wait: 2 * time.Minute})
	res := out.Result
	lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
	if err != nil || len(lines) < 3 {
		t.Errorf("fetch %s: %v %q %q", url, err, res.Stdout, res.Stderr)
		return "", "", 0, time.Time{}
	}
	var secs float64
	fmt.Sscanf(lines[0], "started %f", &secs)
	started = time.Unix(0, int64(secs*1e9))
	status, body, _ = strings.Cut(lines[1], " ")
	fmt.Sscanf(lines[len(lines)-1], "took %f", &secs)
	return status, body, time.Duration(secs * float64(time.Second)), started
}

func egressEngine(t *testing.T, configure ...func(*config.Config)) *testEngine {
	return newTestEngine(t, append([]func(*config.Config){func(c *config.Config) {
		c.Egress.Deny = []string{"example.com"}
	}}, configure...)...)
}

func TestEgressSandboxReachesTheMirrorOnly(t *testing.T) {
	te := egressEngine(t)
	info := te.create(t, sandbox.CreateRequest{Network: sandbox.NetworkEgress})
	if info.Spec.Network != sandbox.NetworkEgress {
		t.Fatalf("network %q", info.Spec.Network)
	}
	ctr, err := te.docker.Inspect(context.Background(), info.ID)
	if err != nil || len(ctr.Networks) != 1 || ctr.Networks[0] != sandbox.NetworkNone {
		t.Fatalf("container networks %v, %v; want [none]", ctr.Networks, err)
	}
	if status, body, _ := fetch(t, te, info.ID, "http://"+mirror+"/debian/dists/bookworm/Release"); status != "200" || !strings.HasPrefix(body, "Origin: Debian") {
		t.Fatalf("urllib through the gate: %s %q", status, body)
	}
	for _, url := range []string{"http://example.com/", "http://1.1.1.1/", "http://169.254.169.254/latest/meta-data/", "http://172.17.0.1/"} {
		host := strings.Split(strings.TrimPrefix(url, "http://"), "/")[0]
		status, body, took := fetch(t, te, info.ID, url)
		if status != "403" || !strings.HasPrefix(body, "sandtray egress: "+host+":80 ") || took > 2*time.Second {
			t.Errorf("%s: %s %q after %s; want 403 naming %s within 2s", url, status, body, took, host)
		}
	}
	// No way around the gate: no name resolution, no route.
	res := te.command(t, info.ID, `python3 -c '
import socket
try: print("resolved", socket.gethostbyname("`+mirror+`"))
except OSError as e: print("no dns:", e)
for a in ("151.101.2.132", "1.1.1.1"):
    s=socket.socket(); s.settimeout(3)
    try: s.connect((a,80)); print("connected", a)
    except OSError as e: print("no route:", a, e)
'`)
	if strings.Contains(res.Stdout, "resolved") || strings.Contains(res.Stdout, "connected") || strings.Count(res.Stdout, "no route") != 2 {
		t.Fatalf("from inside: %q %q", res.Stdout, res.Stderr)
	}
	// The record and the log name each host with its decision and rule.
	logs, _ := te.Logs(context.Background(), info.ID, 0)
	var text strings.Builder
	for _, a := range logs {
		if a.Tool == "network" {
			fmt.Fprintln(&text, a.Input, a.Error)
		}
	}
	for _, want := range []string{
		`GET deb.debian.org:80: allow by allow "deb.debian.org" (default)`,
		`GET example.com:80: deny by deny "example.com" (config)`,
		"GET 1.1.1.1:80: deny by IP literal", "GET 169.254.169.254:80: deny by IP literal", "GET 172.17.0.1:80: deny by IP literal",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("sandbox_logs lack %q:\n%s", want, text.String())
		}
	}
	b, err := os.ReadFile(te.cfg.StateDir + "/egress.jsonl")
	if err != nil || !strings.Contains(string(b), `"host":"deb.debian.org","port":80,"method":"GET","decision":"allow","rule":"allow \"deb.debian.org\" (default)"`) ||
		!strings.Contains(string(b), `"host":"example.com","port":80,"method":"GET","decision":"deny","rule":"deny \"example.com\" (config)"`) {
		t.Fatalf("egress.jsonl: %v\n%s", err, b)
	}
}

func TestEgressAptAndInstallWithoutANetwork(t *testing.T) {
	te := egressEngine(t)
	info := te.create(t, sandbox.CreateRequest{Network: sandbox.NetworkEgress})
	// install_packages runs apt-get update and install through the gate:
	// apt honours http_proxy. (apt is slow with this machine's mirror:
	// minutes, with or without the gate.)
	for _, network := range []string{sandbox.NetworkEgress, sandbox.NetworkNone} {
		id := info.ID
		if network == sandbox.NetworkNone {
			id = te.create(t, sandbox.CreateRequest{Network: sandbox.NetworkNone}).ID
		}
		// Watch the container's networks all through the install.
		var seen sync.Map
		var polls atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if c, err := te.docker.Inspect(context.Background(), id); err == nil {
					seen.Store(strings.Join(c.Networks, ","), true)
					polls.Add(1)
				}
			}
		})
		res, err := te.InstallPackages(context.Background(), te.owner, id, sandbox.InstallRequest{Packages: []string{"jq"}, Manager: sandbox.ManagerApt, Timeout: 10 * time.Minute}, func(float64, float64, string) {})
		close(stop)
		wg.Wait()
		if err != nil || len(res.Installed) != 1 || res.Installed[0].Name != "jq" {
			t.Fatalf("%s: install jq: %+v %v", network, res, err)
		}
		seen.Range(func(k, _ any) bool {
			if k != sandbox.NetworkNone {
				t.Errorf("%s: during the install the container was on %q", network, k)
			}
			return true
		})
		if polls.Load() < 3 {
			t.Errorf("%s: only %d inspections during the install", network, polls.Load())
		}
		if out := te.command(t, id, "jq -n 1+1").Stdout; strings.TrimSpace(out) != "2" {
			t.Fatalf("%s: jq after install: %q", network, out)
		}
		if network == sandbox.NetworkNone {
			// Its install window is over: nothing of the gate is left for it.
			if te.networkPart.EgressRegistered(id) {
				t.Fatalf("a none sandbox is still on the gate after its install")
			}
		}
	}
}

func TestEgressAsk(t *testing.T) {
	te := egressEngine(t, func(c *config.Config) {
		c.Egress.Ask = true
		c.Egress.AskTimeout = config.Duration{Duration: 3 * time.Second}
		c.Egress.Allow = []string{} // nothing allowed: the mirror is asked about
	})
	info := te.create(t, sandbox.CreateRequest{Network: sandbox.NetworkEgress})
	// Warm: the first exec and python start in a new sandbox take seconds
	// on this shared machine; the 2 s below are the gate's.
	if status, _, _ := fetch(t, te, info.ID, "http://example.com/"); status != "403" {
		t.Fatalf("warm-up: %s", status)
	}
	url := "http://" + mirror + "/debian/dists/bookworm/Release"
	ask := func(answer func(p sandbox.EgressPending)) (string, string, time.Duration) {
		type result struct {
			status, body string
			took         time.Duration
			started      time.Time
		}
		done := make(chan result, 1)
		go func() {
			s, b, d, at := fetchAt(t, te, info.ID, url)
			done <- result{s, b, d, at}
		}()
		var p sandbox.EgressPending
		testwait.Eventually(t, 30*time.Second, "the request to be pending", func() bool {
			list := te.EgressPending()
			if len(list) == 1 {
				p = list[0]
			}
			return len(list) == 1
		})
		if p.Host != mirror || p.Port != 80 || p.SandboxID != info.ID || p.Client != "engine-test 1.0" {
			t.Fatalf("pending %+v", p)
		}
		if answer != nil {
			answer(p)
		}
		r := <-done
		if lag := p.Since.Sub(r.started); lag > 2*time.Second {
			t.Errorf("the request was pending %s after it started", lag)
		}
		return r.status, r.body, r.took
	}
	if status, body, _ := ask(func(p sandbox.EgressPending) {
		if _, err := te.AnswerEgressHost(context.Background(), info.Name, mirror, sandbox.EgressAllowOnce); err != nil {
			t.Fatal(err)
		}
	}); status != "200" {
		t.Fatalf("allowed once: %s %q", status, body)
	}
	var denied time.Time
	if status, body, _ := ask(func(p sandbox.EgressPending) {
		denied = time.Now()
		if err := te.AnswerEgress(context.Background(), p.ID, sandbox.EgressDeny); err != nil {
			t.Fatal(err)
		}
	}); status != "403" || !strings.Contains(body, "was denied by the user") || time.Since(denied) > 2*time.Second {
		t.Fatalf("denied: %s %q", status, body)
	}
	if status, body, took := ask(nil); status != "403" || !strings.Contains(body, "got no answer from the user within 3s") || took < 3*time.Second {
		t.Fatalf("unanswered: %s %q after %s", status, body, took)
	}
}

func TestBridgeIsTheUsersChoice(t *testing.T) {
	te := newTestEngine(t)
	_, err := te.Create(context.Background(), te.owner, sandbox.CreateRequest{Network: sandbox.NetworkBridge}, nil)
	wantKind(t, err, sandbox.ErrForbidden)
	if !strings.Contains(err.Error(), `use network "egress"`) {
		t.Fatalf("the refusal does not point to egress: %v", err)
	}
}

// TestEgressRulesOutliveARestart: a persistent sandbox's approvals are in
// its state, and the next engine puts them back on the gate.
func TestEgressRulesOutliveARestart(t *testing.T) {
	te := egressEngine(t)
	ctx := context.Background()
	info := te.create(t, sandbox.CreateRequest{Network: sandbox.NetworkEgress, Persistent: true})
	if _, err := te.AnswerEgressHost(ctx, info.Name, "api.example.org", sandbox.EgressAllowSandbox); err != nil {
		t.Fatal(err)
	}
	if _, err := te.AnswerEgressHost(ctx, info.Name, "tracker.example.org:8080", sandbox.EgressDenySandbox); err != nil {
		t.Fatal(err)
	}
	if got, _ := te.Get(ctx, info.ID); fmt.Sprint(got.EgressRules) != "{[api.example.org] [tracker.example.org:8080]}" {
		t.Fatalf("rules in Info: %+v", got.EgressRules)
	}
	te.stopLoops()
	te.networkPart.CloseEgress()
	e2, err := newEngine(ctx, te.cfg, te.docker, Options{Labels: te.labels, Tick: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { e2.stopLoops(); e2.networkPart.CloseEgress() }()
	testwait.Eventually(t, 60*time.Second, "the adopted sandbox back on the gate with its rules", func() bool {
		n, err := e2.EgressNetwork(ctx, info.ID)
		return err == nil && e2.networkPart.EgressRegistered(info.ID) && fmt.Sprint(n.Rules) == "{[api.example.org] [tracker.example.org:8080]}"
	})
}
