package run

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// fakeCPU is a sandbox's CPU time, as the test sets it, read at the
// test's clock.
type fakeCPU struct {
	used  time.Duration
	ok    bool
	clock *time.Time
}

func (c *fakeCPU) CPU(string) (CPUReading, bool) { return CPUReading{Used: c.used, At: *c.clock}, c.ok }

// fakeMeter is a layer's size, as the test sets it, counting measurements.
type fakeMeter struct {
	size     int64
	measured int
}

func (m *fakeMeter) Measure(context.Context, sandbox.Handle, *Disk) (int64, error) {
	m.measured++
	return m.size, nil
}

// fakeWatch is an IdleWatch on fakes (CPU readable, a 10 MB layer) that
// reads the test's clock.
func fakeWatch(clock *time.Time) (*IdleWatch, *fakeCPU, *fakeMeter) {
	cpu, meter := &fakeCPU{ok: true, clock: clock}, &fakeMeter{size: 10 << 20}
	w := NewIdleWatch(cpu, meter)
	w.now = func() time.Time { return *clock }
	return w, cpu, meter
}

// TestIdleWatchMeasuresOnlyWhatUsedCPU: between calls, a sandbox is
// measured only when its processes used CPU beyond the noise since the last
// tick; it is acted on only when it grew past the limit since the last
// measurement outside calls, never when it merely sits over the limit, and
// never while or right after a call runs.
func TestIdleWatchMeasuresOnlyWhatUsedCPU(t *testing.T) {
	const limit = 64 << 20
	clock := time.Unix(1e9, 0)
	w, cpu, meter := fakeWatch(&clock)
	var d Disk
	tick := func(cpuUsed time.Duration, size int64) Verdict {
		t.Helper()
		clock = clock.Add(time.Second)
		cpu.used += cpuUsed
		meter.size = size
		v, err := w.Check(context.Background(), fakeTarget{}, &d, limit)
		if err != nil {
			t.Fatal(err)
		}
		if v.Act != Nothing {
			d.Acted() // as the watch does once it acted
		}
		return v
	}
	expect := func(what string, v Verdict, act Action, measured int) {
		t.Helper()
		if v.Act != act || meter.measured != measured {
			t.Fatalf("%s: act %d after %d measurements, want %d after %d", what, v.Act, meter.measured, act, measured)
		}
	}

	expect("first look", tick(0, 10<<20), Nothing, 0)
	expect("idle: init's wakeups only", tick(25*time.Microsecond, 10<<20), Nothing, 0)
	for range 100 {
		tick(25*time.Microsecond, 10<<20)
	}
	expect("idle for 100 s", tick(25*time.Microsecond, 10<<20), Nothing, 0)
	expect("CPU used: measured, sets the base", tick(20*time.Millisecond, 30<<20), Nothing, 1)
	expect("grew within the limit", tick(20*time.Millisecond, 60<<20), Nothing, 2)
	expect("grew past the limit", tick(20*time.Millisecond, 100<<20), KillWriters, 3)
	w.Rebase(&d, 105<<20)
	expect("over the limit, no CPU", tick(0, 105<<20), Nothing, 3)
	expect("over the limit, CPU but no growth", tick(20*time.Millisecond, 105<<20), Nothing, 4)
	expect("growth under the slack", tick(20*time.Millisecond, 105<<20+512<<10), Nothing, 5)
	// No call ran since the kill, so what grows the layer now outlived it
	// (a process the kill spares): the pauses between its writes do not
	// save the sandbox.
	expect("then past it, added up, after a pause", tick(20*time.Millisecond, 106<<20+512<<10), StopSandbox, 6)
	w.Rebase(&d, 110<<20)
	expect("stopped, over the limit, not growing", tick(20*time.Millisecond, 110<<20), Nothing, 7)

	// A call: the watch leaves the sandbox alone while it runs and at the
	// tick after, and the first measurement after it only sets the base,
	// however much the call wrote.
	d.CallStarted()
	expect("a call runs", tick(time.Second, 500<<20), Nothing, 7)
	d.CallEnded()
	expect("the tick after the call", tick(time.Second, 500<<20), Nothing, 7)
	expect("first measurement after a call", tick(20*time.Millisecond, 510<<20), Nothing, 8)
	expect("growing after the call", tick(20*time.Millisecond, 600<<20), KillWriters, 9)
	d.CallStarted()
	d.CallEnded()
	expect("a short call between two ticks", tick(20*time.Millisecond, 700<<20), Nothing, 9)

	// CPU that cannot be read (a remote daemon) measures nothing.
	cpu.ok = false
	expect("no cgroup", tick(time.Second, 900<<20), Nothing, 9)
	expect("no cgroup, still", tick(time.Second, 900<<20), Nothing, 9)
}

// TestIdleWatchHoldsCallsWhileItActs: from a verdict to act until the
// watch has acted, a new call waits to start: the kill of the sandbox's
// processes never meets a call's exec being started.
func TestIdleWatchHoldsCallsWhileItActs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const limit = 64 << 20
		clock := time.Unix(1e9, 0)
		w, cpu, meter := fakeWatch(&clock)
		var d Disk
		var v Verdict
		for _, size := range []int64{10 << 20, 10 << 20, 30 << 20, 100 << 20} {
			clock = clock.Add(time.Second)
			cpu.used += 20 * time.Millisecond
			meter.size = size
			var err error
			if v, err = w.Check(context.Background(), fakeTarget{}, &d, limit); err != nil {
				t.Fatal(err)
			}
		}
		if v.Act != KillWriters {
			t.Fatalf("verdict %d, want KillWriters", v.Act)
		}
		started := make(chan struct{})
		go func() {
			d.CallStarted()
			close(started)
		}()
		synctest.Wait() // the call is blocked, or has started
		select {
		case <-started:
			t.Fatal("a call started while the watch was acting on its sandbox")
		default:
		}
		d.Acted()
		synctest.Wait()
		select {
		case <-started:
		default:
			t.Fatal("the call still waits after the watch acted")
		}
		d.CallEnded()
	})
}

// TestIdleWatchJudgesEachReadingOnce: with a source that reads a sandbox
// every 5 s (Docker's stats) while the watch ticks every second, the noise
// is judged over the 5 s between readings, not the second between ticks,
// and a reading seen before is not judged again: an idle sandbox is never
// measured, a busy one once per new reading.
func TestIdleWatchJudgesEachReadingOnce(t *testing.T) {
	clock := time.Unix(1e9, 0)
	read := clock // when the source last read the sandbox
	cpu, meter := &fakeCPU{ok: true, clock: &read}, &fakeMeter{size: 10 << 20}
	w := NewIdleWatch(cpu, meter)
	w.now = func() time.Time { return clock }
	var d Disk
	run := func(seconds int, perSecond time.Duration) {
		t.Helper()
		for range seconds {
			clock = clock.Add(time.Second)
			if clock.Sub(read) >= 5*time.Second {
				cpu.used += perSecond * time.Duration(clock.Sub(read)/time.Second)
				read = clock
			}
			if v, err := w.Check(context.Background(), fakeTarget{}, &d, 64<<20); err != nil || v.Act != Nothing {
				t.Fatalf("verdict %d, err %v", v.Act, err)
			}
		}
	}
	// Just under the noise: 900 µs per reading, 180 µs per tick.
	run(100, 180*time.Microsecond)
	if meter.measured != 0 {
		t.Errorf("an idle sandbox read every 5 s was measured %d times in 100 s", meter.measured)
	}
	// Busy: every new reading shows 50 ms, and is measured once.
	run(50, 10*time.Millisecond)
	if meter.measured != 10 {
		t.Errorf("a busy sandbox read every 5 s was measured %d times in 50 s, want 10", meter.measured)
	}
}

// TestIdleWatchBoundsItsOwnCost: after a measurement that took long (a
// layer of many files), the next waits several times as long, however busy
// the sandbox.
func TestIdleWatchBoundsItsOwnCost(t *testing.T) {
	clock := time.Unix(1e9, 0)
	cpu := &fakeCPU{ok: true, clock: &clock}
	slow := &slowMeter{clock: &clock, took: 3 * time.Second}
	w := NewIdleWatch(cpu, slow)
	w.now = func() time.Time { return clock }
	var d Disk
	for range 20 {
		clock = clock.Add(time.Second)
		cpu.used += 100 * time.Millisecond
		if _, err := w.Check(context.Background(), fakeTarget{}, &d, 64<<20); err != nil {
			t.Fatal(err)
		}
	}
	// 20 ticks of 1 s, each measurement 3 s and then a wait of 12 s from
	// its start: about 2, where a measurement every tick would be 20.
	if slow.measured > 3 {
		t.Errorf("%d measurements of 3 s in 20 ticks of a busy sandbox, want at most 3", slow.measured)
	}
}

type slowMeter struct {
	clock    *time.Time
	took     time.Duration
	measured int
}

func (m *slowMeter) Measure(context.Context, sandbox.Handle, *Disk) (int64, error) {
	m.measured++
	*m.clock = m.clock.Add(m.took)
	return 1 << 20, nil
}

// TestParseCPU reads both cgroup versions' accounting files.
func TestParseCPU(t *testing.T) {
	if d, ok := parseCPU([]byte("1234567\n"), false); !ok || d != 1234567 {
		t.Errorf("cpuacct.usage: %v %v", d, ok)
	}
	if d, ok := parseCPU([]byte("usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n"), true); !ok || d != 1500*time.Microsecond {
		t.Errorf("cpu.stat: %v %v", d, ok)
	}
	if _, ok := parseCPU([]byte("nr_periods 0\n"), true); ok {
		t.Error("cpu.stat without usage_usec read as a usage")
	}
}

// TestCgroupsFindsEachLayout: the CPU file is found under cgroup v1's
// cgroupfs layout and v2's systemd one; an unknown container reads as
// unknown.
func TestCgroupsFindsEachLayout(t *testing.T) {
	root := t.TempDir()
	write := func(rel, data string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cpuacct/docker/aaa/cpuacct.usage", "2000000\n")
	write("system.slice/docker-bbb.scope/cpu.stat", "usage_usec 3000\n")
	c := NewCgroups(root)
	if r, ok := c.CPU("aaa"); !ok || r.Used != 2*time.Millisecond {
		t.Errorf("v1 cgroupfs: %v %v", r.Used, ok)
	}
	if r, ok := c.CPU("bbb"); !ok || r.Used != 3*time.Millisecond {
		t.Errorf("v2 systemd: %v %v", r.Used, ok)
	}
	for _, id := range []string{"ccc", "../docker/aaa", ""} {
		if _, ok := c.CPU(id); ok {
			t.Errorf("%q read as a container's CPU", id)
		}
	}
}
