package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// checkPool says what the warm pool holds now (the spares Docker runs for
// any Sandtray of this user) and the budget it keeps them within.
func checkPool(ctx context.Context, e *Env) []Line {
	if e.Docker.Host == "" || e.Docker.Version == "" {
		return nil // checkDocker has said why
	}
	spares, err := engine.ProbePool(ctx, e.Config)
	if err != nil {
		return []Line{{Warn, "pool", fmt.Sprintf("cannot list the warm pool's spares: %v", err), "check that Docker answers (see the docker line)"}}
	}
	return []Line{poolLine(e.Config.Pool, spares)}
}

// poolLine is the report's line for the pool: its spares now, its budget.
func poolLine(c config.Pool, spares []sandbox.PoolImage) Line {
	if c.Size == 0 || c.MaxTotal == 0 {
		return Line{Info, "pool", "off (pool.size or pool.max_total is 0): every new sandbox starts cold", ""}
	}
	budget := fmt.Sprintf("keeps %d per image used in the last %s, more after bursts, within %d spares and %d MB",
		c.Size, c.Idle.Duration, c.MaxTotal, c.MemoryMB)
	if len(spares) == 0 {
		return Line{OK, "pool", "no spares now (Sandtray is not running, or has not made them yet); " + budget, ""}
	}
	total, parts := 0, make([]string, 0, len(spares))
	for _, s := range spares {
		total += s.Ready
		parts = append(parts, fmt.Sprintf("%s %d", s.Image, s.Ready))
	}
	return Line{OK, "pool", fmt.Sprintf("%d spares ready (%s); %s", total, strings.Join(parts, ", "), budget), ""}
}
