package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// statsEvery is how often StreamStats samples (metrics-server itself
// scrapes every 15 s by default).
const statsEvery = 5 * time.Second

// podMetrics is the part of metrics.k8s.io/v1beta1 PodMetrics read here.
type podMetrics struct {
	Timestamp  time.Time `json:"timestamp"`
	Window     string    `json:"window"`
	Containers []struct {
		Name  string            `json:"name"`
		Usage map[string]string `json:"usage"`
	} `json:"containers"`
}

// Stats samples Pod id: from the metrics API (metrics.k8s.io, served by
// metrics-server) where the cluster has it, which gives CPU as a rate over
// its window (CPUTotal accumulates it, see cpuTime); else from the
// container's own cgroup files, read over an exec (cgroupStats). A Pod
// that is gone fails with sandbox.ErrNotFound.
func (c *Client) Stats(ctx context.Context, id string) (runtime.StatsSample, error) {
	c.mu.Lock()
	noMetrics := c.noMetrics
	c.mu.Unlock()
	if !noMetrics {
		smp, err := c.metricsStats(ctx, id)
		if err == nil || ctx.Err() != nil || errors.Is(err, sandbox.ErrNotFound) {
			return smp, err
		}
		if _, gerr := c.get(ctx, id); gerr != nil {
			return runtime.StatsSample{}, gerr
		}
		if _, derr := c.cs.CoreV1().RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1").DoRaw(ctx); derr == nil {
			return runtime.StatsSample{}, err // the API is there: this Pod has no sample yet
		}
		c.mu.Lock()
		c.noMetrics = true
		c.mu.Unlock()
	}
	return c.cgroupStats(ctx, id)
}

// metricsStats is Pod id's sample from the metrics API.
func (c *Client) metricsStats(ctx context.Context, id string) (runtime.StatsSample, error) {
	raw, err := c.cs.CoreV1().RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces", c.ns, "pods", id).DoRaw(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return runtime.StatsSample{}, ctx.Err()
		}
		return runtime.StatsSample{}, fmt.Errorf("kubernetes: no usage for sandbox %s from the metrics API (metrics.k8s.io): %v: %w", id, err, sandbox.ErrUnavailable)
	}
	var m podMetrics
	if err := json.Unmarshal(raw, &m); err != nil {
		return runtime.StatsSample{}, fmt.Errorf("kubernetes: metrics of sandbox %s: %w", id, err)
	}
	smp := runtime.StatsSample{Read: m.Timestamp, OnlineCPUs: 1}
	for _, ct := range m.Containers {
		if ct.Name != containerName {
			continue
		}
		if q, err := resource.ParseQuantity(ct.Usage["cpu"]); err == nil {
			smp.CPUTotal, smp.SystemCPU = c.cpuTime(id, m.Timestamp, q.AsApproximateFloat64())
		}
		if q, err := resource.ParseQuantity(ct.Usage["memory"]); err == nil {
			smp.MemoryUsage = uint64(q.Value())
		}
	}
	return smp, nil
}

// readCgroup prints the container's memory use and limit, processes and
// CPU time (ns) from its cgroup, v2 or v1, with the shell's builtins only.
const readCgroup = `cd /sys/fs/cgroup 2>/dev/null || exit 3
if [ -f cgroup.controllers ]; then
	read m <memory.current; read l <memory.max; read p <pids.current
	while read k v; do [ "$k" = usage_usec ] && u=${v}000; done <cpu.stat
else
	read m <memory/memory.usage_in_bytes; read l <memory/memory.limit_in_bytes
	read p <pids/pids.current; read u <cpuacct/cpuacct.usage
fi
echo "$m $l $p $u"`

// cgroupStats is Pod id's sample from its container's cgroup, read over an
// exec: CPU as cumulative time against the wall clock (one CPU's worth).
func (c *Client) cgroupStats(ctx context.Context, id string) (runtime.StatsSample, error) {
	out, errOut := runtime.NewCapped(outKept), runtime.NewCapped(stderrKept)
	code, err := c.exec(ctx, id, containerName, []string{"/bin/sh", "-c", readCgroup}, nil, out, errOut)
	if err != nil {
		return runtime.StatsSample{}, err
	}
	now := time.Now()
	var mem, cpu, pids uint64
	var limit string
	if _, serr := fmt.Sscan(out.String(), &mem, &limit, &pids, &cpu); code != 0 || serr != nil {
		return runtime.StatsSample{}, fmt.Errorf("kubernetes: sandbox %s's cgroup gave %q (exit %d, %s): %w", id, out.String(), code,
			strings.TrimSpace(errOut.String()), sandbox.ErrUnsupported)
	}
	smp := runtime.StatsSample{Read: now, CPUTotal: cpu, SystemCPU: uint64(now.UnixNano()), OnlineCPUs: 1, MemoryUsage: mem, Pids: pids}
	if l, err := strconv.ParseUint(limit, 10, 64); err == nil && l < 1<<60 {
		smp.MemoryLimit = l
	}
	return smp, nil
}

// cpuTime accumulates Pod id's CPU rate (cores) into CPU time since the
// first sample, and the wall time since then, in ns: the cumulative
// figures the engine's CPU % takes the differences of.
func (c *Client) cpuTime(id string, at time.Time, cores float64) (cpu, wall uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cpu == nil {
		c.cpu = map[string]*cpuAcc{}
	}
	a := c.cpu[id]
	if a == nil {
		a = &cpuAcc{first: at, last: at}
		c.cpu[id] = a
	}
	if d := at.Sub(a.last); d > 0 {
		a.total += cores * float64(d)
		a.last = at
	}
	return uint64(a.total), uint64(a.last.Sub(a.first))
}

// cpuAcc is one Pod's accumulated CPU time.
type cpuAcc struct {
	first, last time.Time
	total       float64 // ns of CPU
}

// StreamStats calls fn with a sample every statsEvery until ctx ends or
// a sample fails (the sandbox went).
func (c *Client) StreamStats(ctx context.Context, id string, fn func(runtime.StatsSample)) error {
	t := time.NewTicker(statsEvery)
	defer t.Stop()
	for {
		smp, err := c.Stats(ctx, id)
		if err != nil {
			return err
		}
		fn(smp)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
