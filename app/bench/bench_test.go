package bench

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/test/dockertest"
)

// containersLabelled lists the containers whose io.sandtray.test is value.
func containersLabelled(t *testing.T, value string) []string {
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label=io.sandtray.test="+value).Output()
	if err != nil {
		t.Fatalf("docker ps: %v", err)
	}
	return strings.Fields(string(out))
}

// TestRunReportsEveryRow runs a small bench on the real daemon: every row is
// in the table, the numbers are plausible, and nothing is left behind.
func TestRunReportsEveryRow(t *testing.T) {
	image := dockertest.Image(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var progress strings.Builder
	rep, err := Run(ctx, Options{N: 4, Image: image, Progress: &progress})
	if err != nil {
		t.Fatalf("bench: %v\nprogress:\n%s", err, progress.String())
	}
	for _, q := range []struct {
		name string
		q    Quantiles
		n    int
	}{{"socket", rep.Socket, 4}, {"http", rep.HTTP, 4}, {"direct", rep.Direct, 4}, {"pool", rep.Pool, 3}, {"no pool", rep.NoPool, 3},
		{"other image", rep.Other, 3}, {"burst", rep.Burst, 2 * burstSize}, {"cold create", rep.ColdCreate, 3},
		{"cold first", rep.ColdFirst, 3}, {"bare", rep.Bare, 3},
		{"command", rep.Ops.Command, 4}, {"write", rep.Ops.Write, 4}, {"read", rep.Ops.Read, 4}, {"forward", rep.Ops.Forward, 4},
		{"loopback", rep.Ops.Loopback, 4}, {"gate", rep.Ops.Gate, 4}} {
		if q.q.N != q.n || q.q.P50 <= 0 || q.q.P90 < q.q.P50 || q.q.P90 > time.Minute {
			t.Errorf("%s: %+v, want %d samples, 0 < p50 <= p90 < 1m", q.name, q.q, q.n)
		}
	}
	if rep.Ratio() <= 0 {
		t.Errorf("ratio %v", rep.Ratio())
	}
	if rep.Ops.GateMBps <= 0 || rep.Ops.CopyMBps <= 0 || rep.Ops.CopyBytes != copyBytes {
		t.Errorf("throughputs %+v", rep.Ops)
	}
	if len(rep.Rates) != len(Levels) {
		t.Errorf("rates %+v, want one per level %v", rep.Rates, Levels)
	}
	for i, r := range rep.Rates {
		if r.Clients != Levels[i] || r.PerSecond <= 0 {
			t.Errorf("rate %+v", r)
		}
	}
	table := rep.Table()
	for _, row := range []string{rowSocket, rowHTTP, rowDirect, rowRatio, rowCmd, rowWrite, rowRead, rowFwd, rowLoop, rowGate, rowGateO, rowGateMB, rowCopy, rowPool, rowOther, rowBurst, rowNoPool, rowColdC, rowColdF, rowBare, rowOver,
		"executions/s, 1 concurrent client ", "executions/s, 4 concurrent clients", "executions/s, 16 concurrent clients"} {
		if !strings.Contains(table, row) {
			t.Errorf("table lacks %q:\n%s", row, table)
		}
	}
	for _, label := range rep.Labels {
		if left := containersLabelled(t, label); len(left) != 0 {
			exec.Command("docker", append([]string{"rm", "-f"}, left...)...).Run()
			t.Errorf("the bench left containers labelled %s: %v", label, left)
		}
	}
	t.Logf("\n%s", table)
}

func TestQuantilesAndTable(t *testing.T) {
	var d []time.Duration
	for i := 10; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	if q := quantiles(d); q.P50 != 5*time.Millisecond || q.P90 != 9*time.Millisecond || q.N != 10 {
		t.Errorf("quantiles of 1..10 ms = %+v, want p50 5 ms, p90 9 ms", q)
	}
	if q := quantiles(d[:1]); q.P50 != 10*time.Millisecond || q.P90 != 10*time.Millisecond {
		t.Errorf("quantiles of one sample = %+v", q)
	}
	rep := Report{Machine: "m", Image: "img", N: 10, Creates: 3,
		Socket: Quantiles{P50: 1200 * time.Microsecond, P90: 2 * time.Millisecond},
		Direct: Quantiles{P50: 72 * time.Millisecond, P90: 90 * time.Millisecond},
		Rates:  []Rate{{1, 812.4}}}
	table := rep.Table()
	for _, want := range []string{"1.20 ms", "72.0 ms", "60.0×", "812/s", "executions/s, 1 concurrent client "} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func TestProcReaders(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	if rss := selfRSS(); rss < 1<<20 {
		t.Errorf("own RSS %d bytes, want at least a megabyte", rss)
	}
	if ticks := cpuTicks(os.Getpid()); ticks < 0 {
		t.Errorf("own CPU ticks %v, want a reading", ticks)
	}
	if cpuTicks(0) != -1 || findProcess("no-such-process-name") != 0 {
		t.Error("a missing process gave a reading")
	}
	if i := (Idle{Sandtray: -1}); !strings.Contains(Report{Idle: []Idle{i}}.Table(), "n/a") {
		t.Error("an unread figure is not shown as n/a")
	}
}
