package scripting

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Preload loads scripts with SCRIPT LOAD, in one pipeline per node: on
// Cluster on every master (ForEachMaster), elsewhere on the node the client
// serves. It reports no reload (a preload is no NOSCRIPT), and the scripts
// loaded count as seen, so that a later NOSCRIPT for one of them is a
// reload. It returns the first error; on Cluster, prefixed with the
// address of the master that failed.
func (r *Runner) Preload(ctx context.Context, scripts []*Script) error {
	if r.cluster == nil {
		return r.preloadOn(ctx, r.rdb, scripts)
	}
	return r.cluster.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		if err := r.preloadOn(ctx, c, scripts); err != nil {
			return fmt.Errorf("%s: %w", c.Options().Addr, err)
		}
		return nil
	})
}

// preloadOn sends one SCRIPT LOAD per script to c, as one pipeline.
func (r *Runner) preloadOn(ctx context.Context, c redis.Cmdable, scripts []*Script) error {
	cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, s := range scripts {
			p.ScriptLoad(ctx, s.src)
		}
		return nil
	})
	r.trip(ctx, 1)
	if err != nil {
		return err
	}
	for i, cmd := range cmds {
		if cmd.Err() == nil {
			r.saw(scripts[i], nil)
		}
	}
	return nil
}
