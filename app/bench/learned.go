package bench

import (
	"context"
	"fmt"
	"io"
	"time"
)

// burstSize is how many sandboxes a burst creates back to back.
const burstSize = 5

// measurePool times what the learning pool is for: an image not in
// pool.images but used once before, and bursts of five creates; then the
// cold path (pool off) against Docker's bare create and start of the same
// image, in the same run.
func measurePool(ctx context.Context, rep *Report, warm, cold *stack, progress io.Writer) error {
	c, err := dial(ctx, warm.path(), "sandtray-bench")
	if err != nil {
		return err
	}
	defer c.close()
	other := "sandtray-bench/other:" + randomHex()
	if err := warm.eng.Bench().TagImage(ctx, rep.Image, other); err != nil {
		return err
	}
	defer warm.eng.Bench().Untag(context.WithoutCancel(ctx), other)
	fmt.Fprintf(progress, "an image used once before (%s), %d sandboxes\n", other, rep.Creates)
	if err := oneSandbox(ctx, c, other); err != nil { // the use the pool learns from, untimed
		return err
	}
	if rep.Other, err = createToFirstResult(ctx, warm, c, rep.Creates, other); err != nil {
		return err
	}
	bursts := max(2, rep.Creates/burstSize)
	fmt.Fprintf(progress, "bursts of %d creates, %d bursts after one the pool learns from\n", burstSize, bursts)
	if rep.Burst, err = timeBursts(ctx, warm, c, bursts); err != nil {
		return err
	}
	cc, err := dial(ctx, cold.path(), "sandtray-bench")
	if err != nil {
		return err
	}
	defer cc.close()
	fmt.Fprintf(progress, "cold path and bare docker create+start, %d of each, interleaved\n", rep.Creates)
	return measureCold(ctx, rep, cold, cc)
}

// oneSandbox creates a sandbox of image, runs print(1) and deletes it.
func oneSandbox(ctx context.Context, c *client, image string) error {
	id, err := c.createSandbox(ctx, image)
	if err != nil {
		return err
	}
	err = c.runPrint(ctx, id)
	if derr := c.deleteSandbox(ctx, id); err == nil {
		err = derr
	}
	return err
}

// timeBursts times each create and first result of bursts of five, back to
// back, after one untimed burst the pool learns from; the pool refills
// between bursts, untimed.
func timeBursts(ctx context.Context, s *stack, c *client, bursts int) (Quantiles, error) {
	var times []time.Duration
	for round := range bursts + 1 {
		if err := s.waitPool(ctx); err != nil {
			return Quantiles{}, err
		}
		var ids []string
		for range burstSize {
			start := time.Now()
			id, err := c.createSandbox(ctx, "")
			if err == nil {
				ids = append(ids, id)
				err = c.runPrint(ctx, id)
			}
			if err != nil {
				return Quantiles{}, err
			}
			if round > 0 {
				times = append(times, time.Since(start))
			}
		}
		for _, id := range ids {
			if err := c.deleteSandbox(ctx, id); err != nil {
				return Quantiles{}, err
			}
		}
	}
	return quantiles(times), nil
}

// measureCold times, interleaved so both meet the same machine, the cold
// path (create_sandbox, then the first execute_code, each part timed too)
// and Docker's bare create and start.
func measureCold(ctx context.Context, rep *Report, cold *stack, c *client) error {
	var create, first, total, bare []time.Duration
	for range rep.Creates {
		d, err := cold.eng.Bench().BareCreateStart(ctx, rep.Image)
		if err != nil {
			return err
		}
		bare = append(bare, d)
		start := time.Now()
		id, err := c.createSandbox(ctx, "")
		if err != nil {
			return err
		}
		created := time.Now()
		err = c.runPrint(ctx, id)
		done := time.Now()
		if derr := c.deleteSandbox(ctx, id); err == nil {
			err = derr
		}
		if err != nil {
			return err
		}
		create, first, total = append(create, created.Sub(start)), append(first, done.Sub(created)), append(total, done.Sub(start))
	}
	rep.NoPool, rep.ColdCreate, rep.ColdFirst, rep.Bare = quantiles(total), quantiles(create), quantiles(first), quantiles(bare)
	return nil
}
