package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// warmupCalls run before timing a sandbox, so the first call's one-time
// costs (starting an interpreter, filling caches) are not in the figures.
const warmupCalls = 3

// Quantiles are the median and 90th percentile of a sample.
type Quantiles struct {
	P50, P90 time.Duration
	N        int
}

// quantiles uses the nearest-rank method: P90 of 10 samples is the 9th.
func quantiles(d []time.Duration) Quantiles {
	if len(d) == 0 {
		return Quantiles{}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	rank := func(p int) time.Duration { return s[max((p*len(s)+99)/100-1, 0)] }
	return Quantiles{P50: rank(50), P90: rank(90), N: len(s)}
}

// timeCalls times n calls of fn after warmupCalls untimed ones.
func timeCalls(ctx context.Context, n int, fn func(context.Context) error) (Quantiles, error) {
	for range warmupCalls {
		if err := fn(ctx); err != nil {
			return Quantiles{}, err
		}
	}
	times := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if err := fn(ctx); err != nil {
			return Quantiles{}, err
		}
		times = append(times, time.Since(start))
	}
	return quantiles(times), nil
}

// directExec times the peers' method: one `docker exec` of python3 per call.
func directExec(ctx context.Context, s *stack, id string, n int) (Quantiles, error) {
	return timeCalls(ctx, n, func(ctx context.Context) error {
		out, code, err := s.eng.Bench().DirectExec(ctx, id, []string{"python3", "-c", "print(1)"})
		if err == nil && (code != 0 || out != "1\n") {
			err = fmt.Errorf("docker exec python3 -c 'print(1)': exit %d, output %q", code, out)
		}
		return err
	})
}

// createToFirstResult times create_sandbox (of image, "" for the default)
// then execute_code print(1) in the new sandbox, n times, each after the
// warm pool (if any) has refilled. The sandbox is deleted, untimed, after
// each run.
func createToFirstResult(ctx context.Context, s *stack, c *client, n int, image string) (Quantiles, error) {
	times := make([]time.Duration, 0, n)
	for range n {
		if err := s.waitPool(ctx); err != nil {
			return Quantiles{}, err
		}
		start := time.Now()
		id, err := c.createSandbox(ctx, image)
		if err != nil {
			return Quantiles{}, err
		}
		err = c.runPrint(ctx, id)
		times = append(times, time.Since(start))
		if derr := c.deleteSandbox(ctx, id); err == nil {
			err = derr
		}
		if err != nil {
			return Quantiles{}, err
		}
	}
	return quantiles(times), nil
}

// worker is one concurrent client: its own MCP connection and sandbox.
type worker struct {
	c  *client
	id string
}

// newWorkers connects n clients, each with a sandbox of its own, warmed up.
func newWorkers(ctx context.Context, s *stack, n int) ([]worker, error) {
	ws := make([]worker, 0, n)
	for i := range n {
		c, err := dial(ctx, s.path(), fmt.Sprintf("bench-client-%d", i))
		if err != nil {
			return ws, err
		}
		ws = append(ws, worker{c: c})
		if ws[i].id, err = c.createSandbox(ctx, ""); err != nil {
			return ws, err
		}
		for range warmupCalls {
			if err := c.runPrint(ctx, ws[i].id); err != nil {
				return ws, err
			}
		}
	}
	return ws, nil
}

// throughput runs total print(1) calls spread over the workers, all at once,
// and returns the calls completed per second of wall time.
func throughput(ctx context.Context, ws []worker, total int) (float64, error) {
	per := max(total/len(ws), 1)
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	start := time.Now()
	for i, w := range ws {
		wg.Go(func() {
			for range per {
				if errs[i] = w.c.runPrint(ctx, w.id); errs[i] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return 0, err
		}
	}
	return float64(per*len(ws)) / elapsed.Seconds(), nil
}
