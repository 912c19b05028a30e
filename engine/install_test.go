package engine

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// networksOf returns the networks a sandbox's container is on now.
func (te *testEngine) networksOf(t *testing.T, id string) []string {
	t.Helper()
	ctr, err := te.docker.Inspect(context.Background(), id)
	if err != nil {
		t.Fatalf("inspect %s: %v", id, err)
	}
	return ctr.Networks
}

func (te *testEngine) wantOffline(t *testing.T, id string) {
	t.Helper()
	if got := te.networksOf(t, id); !slices.Equal(got, []string{"none"}) {
		t.Errorf("sandbox networks = %v, want [none]", got)
	}
}

// TestInstallPackages shares one offline sandbox (and one real apt install)
// between its subtests, in order.
func TestInstallPackages(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	info := te.create(t, sandbox.CreateRequest{Name: "inst", Persistent: true})

	t.Run("refused before anything runs", func(t *testing.T) {
		for _, req := range []sandbox.InstallRequest{
			{Packages: []string{"-oDebug::X=1"}, Manager: "apt"},
			{Packages: []string{"tree; touch /pwned"}, Manager: "apt"},
			{Packages: []string{"$(id)"}},
			{Packages: nil},
			{Packages: []string{"jq"}, Manager: "brew"},
		} {
			_, err := te.InstallPackages(ctx, te.owner, info.ID, req, nil)
			wantKind(t, err, sandbox.ErrInvalid)
		}
		_, err := te.InstallPackages(ctx, te.owner, info.ID, sandbox.InstallRequest{Packages: []string{"numpy"}, Manager: "pip"}, nil)
		wantKind(t, err, sandbox.ErrUnsupported) // the test image has no pip
		te.wantOffline(t, info.ID)
	})

	t.Run("success records the exact version", func(t *testing.T) {
		var lines atomic.Int32
		res, err := te.InstallPackages(ctx, te.owner, info.ID, sandbox.InstallRequest{Packages: []string{"tree"}},
			func(_, _ float64, msg string) { lines.Add(1) })
		if err != nil {
			t.Fatalf("install tree: %v", err)
		}
		te.wantOffline(t, info.ID)
		if logs, _ := te.Logs(ctx, info.ID, 1); len(logs) != 1 || logs[0].Tool != "install_packages" || logs[0].ExitCode == nil {
			t.Errorf("last activity = %+v, want an install_packages entry with an exit code", logs)
		}
		version := strings.TrimSpace(te.command(t, info.ID, "dpkg-query -W -f='${Version}' tree").Stdout)
		want := []sandbox.Package{{Manager: "apt", Name: "tree", Version: version}}
		if version == "" || res.Manager != "apt" || !cmp.Equal(res.Installed, want) {
			t.Errorf("result %+v, want apt and %+v", res, want)
		}
		if lines.Load() < 3 || !strings.Contains(res.Output, "Setting up tree") {
			t.Errorf("%d progress lines; output:\n%s", lines.Load(), res.Output)
		}
		if got, _ := te.Packages(ctx, info.ID); !cmp.Equal(got, want) {
			t.Errorf("manifest = %+v, want %+v", got, want)
		}

		te.stopLoops() // a restart: the manifest comes back from the state dir
		e2, err := newEngine(ctx, te.cfg, te.docker, Options{Labels: te.labels, Tick: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer e2.stopLoops()
		if got, _ := e2.Packages(ctx, info.ID); !cmp.Equal(got, want) {
			t.Errorf("manifest after restart = %+v, want %+v", got, want)
		}
	})

	t.Run("failure", func(t *testing.T) {
		_, err := te.InstallPackages(ctx, te.owner, info.ID, sandbox.InstallRequest{Packages: []string{"sandtray-no-such-package"}, Manager: "apt"}, nil)
		wantKind(t, err, sandbox.ErrInvalid)
		if !strings.Contains(err.Error(), "Unable to locate package") {
			t.Errorf("error does not quote apt: %v", err)
		}
		te.wantOffline(t, info.ID)
	})

	t.Run("timeout", func(t *testing.T) {
		_, err := te.InstallPackages(ctx, te.owner, info.ID, sandbox.InstallRequest{Packages: []string{"jq"}, Timeout: 300 * time.Millisecond}, nil)
		wantKind(t, err, sandbox.ErrInvalid)
		if !strings.Contains(err.Error(), "timed out") {
			t.Errorf("error does not say it timed out: %v", err)
		}
		te.wantOffline(t, info.ID)
	})

	t.Run("cancelled", func(t *testing.T) {
		cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		if _, err := te.InstallPackages(cctx, te.owner, info.ID, sandbox.InstallRequest{Packages: []string{"jq"}}, nil); err == nil {
			t.Fatal("a cancelled install succeeded")
		}
		te.wantOffline(t, info.ID)
	})

	t.Run("leftover network is restored", func(t *testing.T) {
		// As if the engine had died mid-install.
		if err := te.docker.DisconnectNetwork(ctx, info.ID, "none"); err != nil {
			t.Fatal(err)
		}
		if err := te.docker.ConnectNetwork(ctx, info.ID, "bridge"); err != nil {
			t.Fatal(err)
		}
		b, _ := te.reg.BoxOf(info.ID)
		te.capture.RestoreOffline(ctx, boxTarget{te.Engine, b}.captureTarget()) // what adoption does
		te.wantOffline(t, info.ID)
	})
}

// TestFileToolsWaitForTheInstallWindow: list_files and make_directory run
// the sandbox's own programs, so while an install has an offline sandbox's
// way out through the egress gate open they wait for it like every call:
// each returns after the window has closed, and does its work.
func TestFileToolsWaitForTheInstallWindow(t *testing.T) {
	te := newTestEngine(t)
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	if _, err := te.WriteFile(ctx, te.owner, id, sandbox.WriteRequest{Path: "/usr/local/sbin/apt-get", Data: []byte(heldApt), Mode: 0o755}); err != nil {
		t.Fatal(err)
	}
	raw := te.raw(t, id)
	installed := te.holdInstall(t, id, raw)

	type ended struct {
		tool       string
		windowOpen bool
		err        error
	}
	results := make(chan ended, 2)
	go func() {
		_, err := te.ListFiles(ctx, te.owner, id, ".", 1, false)
		results <- ended{"list_files", raw("ls /tmp/window 2>/dev/null") != "", err}
	}()
	go func() {
		_, err := te.MakeDirectory(ctx, te.owner, id, "made")
		results <- ended{"make_directory", raw("ls /tmp/window 2>/dev/null") != "", err}
	}()
	var early []ended
	eventually(t, 30*time.Second, "list_files and make_directory to wait for the install", func() bool {
		select {
		case r := <-results:
			early = append(early, r)
		default:
		}
		b, _ := te.reg.BoxOf(id)
		return te.reg.CallsWaiting(b)+te.execs.WaitingIn(id)+len(early) >= 2
	})
	raw("touch /tmp/release")
	if err := <-installed; err != nil {
		t.Fatalf("install: %v", err)
	}
	for len(early) < 2 {
		early = append(early, <-results)
	}
	for _, r := range early {
		if r.err != nil || r.windowOpen {
			t.Errorf("%s during an install returned %v with the window open = %v; want it to wait until the window closes", r.tool, r.err, r.windowOpen)
		}
	}
	if out := te.command(t, id, "test -d made && echo yes").Stdout; out != "yes\n" {
		t.Errorf("make_directory's folder after the install: %q", out)
	}
}
