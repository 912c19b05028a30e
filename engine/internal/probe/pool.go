package probe

import (
	"context"
	"slices"
	"strings"

	"github.com/sandtray/sandtray/engine/runtime"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/pool"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Pool reports the warm pool's spares running now, by image, as Docker
// lists them (`sandtray doctor` runs outside the engine): the spares of
// every running Sandtray of this user's Docker, test engines' excepted.
// Want is left 0: only the engine knows its shares.
func Pool(ctx context.Context, cfg config.Config) ([]sandbox.PoolImage, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	cli, err := runtime.Connect(ctx, cfg.RuntimeName(), cfg.RuntimeHost())
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	every := map[string]string{sandbox.LabelManaged: "true"} // every engine's: doctor is none of them
	list, err := cli.List(ctx, map[string]string{sandbox.LabelManaged: "true", sandbox.LabelPool: ""}, false)
	if err != nil {
		return nil, err
	}
	ready := map[string]int{}
	for _, c := range list {
		if pool.IsLeftover(c, every) && c.Labels[sandbox.LabelTest] == "" && c.State == "running" {
			ready[c.Labels[sandbox.LabelImage]]++
		}
	}
	out := make([]sandbox.PoolImage, 0, len(ready))
	for img, n := range ready {
		out = append(out, sandbox.PoolImage{Image: img, Ready: n})
	}
	slices.SortFunc(out, func(a, b sandbox.PoolImage) int { return strings.Compare(a.Image, b.Image) })
	return out, nil
}
