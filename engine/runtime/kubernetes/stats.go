package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
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

// Stats samples Pod id from the metrics API (metrics.k8s.io, served by
// metrics-server). It gives CPU as a rate over the API's window, not a
// cumulative time: CPUTotal accumulates it (see cpuTime), which is what a
// CPU % between two samples needs. A cluster
// without the API fails with sandbox.ErrUnsupported saying so.
func (c *Client) Stats(ctx context.Context, id string) (runtime.StatsSample, error) {
	raw, err := c.cs.CoreV1().RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces", c.ns, "pods", id).DoRaw(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return runtime.StatsSample{}, ctx.Err()
		}
		if _, gerr := c.get(ctx, id); gerr != nil {
			return runtime.StatsSample{}, gerr
		}
		return runtime.StatsSample{}, fmt.Errorf("kubernetes: no usage for sandbox %s from the metrics API (metrics.k8s.io; install metrics-server "+
			"on the cluster for CPU and memory figures): %v: %w", id, err, sandbox.ErrUnsupported)
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
// the metrics API does not answer.
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
