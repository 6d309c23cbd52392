package main

import (
	"context"
	"sync"
	"time"

	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// ourRateLibs returns our rate limiters for the rate scenario, each with
// the algorithm of its peer (GCRA: redis_rate; fixed window:
// ulule/limiter) and the same rateLimit per ratePeriod. The
// redisson.Clients stay open until the process ends (rateLib has no
// close), which costs nothing here: they hold no subscription. Names are
// short, like the peers' default prefixes ("rate:", "limiter:"), since the
// key name is much of the memory an identity costs.
func ourRateLibs() []rateLib {
	ours := func(algo, settings string, decider func(c *redisson.Client) func(context.Context, string) (bool, error)) rateLib {
		return rateLib{name: "redisson", algo: algo, settings: settings, kind: kindOurs,
			open: func(_ context.Context, rdb *redis.Client) (func(context.Context, string) (bool, error), error) {
				c, err := redisson.New(rdb, nil)
				if err != nil {
					return nil, err
				}
				return decider(c), nil
			}}
	}
	return []rateLib{
		ours("GCRA", "GetGCRALimiter(rate 100/s, burst 100)", func(c *redisson.Client) func(context.Context, string) (bool, error) {
			l := c.GetGCRALimiter("gcra", rateLimit, ratePeriod, rateLimit)
			return func(ctx context.Context, key string) (bool, error) {
				d, err := l.Allow(ctx, key, 1)
				return d.Allowed, err
			}
		}),
		ours("fixed window", "GetFixedWindowLimiter(100 per 1s)", func(c *redisson.Client) func(context.Context, string) (bool, error) {
			l := c.GetFixedWindowLimiter("fw", rateLimit, ratePeriod)
			return func(ctx context.Context, key string) (bool, error) {
				d, err := l.Allow(ctx, key, 1)
				return d.Allowed, err
			}
		}),
		ours("fixed window", "GetFixedWindowLimiter(100 per 1s).WithLocalQuota(Chunk 10)", func(c *redisson.Client) func(context.Context, string) (bool, error) {
			l := c.GetFixedWindowLimiter("fq", rateLimit, ratePeriod).WithLocalQuota(redisson.LocalQuota{Chunk: 10})
			return func(ctx context.Context, key string) (bool, error) {
				d, err := l.Allow(ctx, key, 1)
				return d.Allowed, err
			}
		}),
		ours("sliding window", "GetRateLimiter per identity (Redisson RRateLimiter)", func(c *redisson.Client) func(context.Context, string) (bool, error) {
			var mu sync.Mutex
			limiters := map[string]*redisson.RateLimiter{}
			return func(ctx context.Context, key string) (bool, error) {
				mu.Lock()
				l := limiters[key]
				mu.Unlock()
				if l == nil {
					l = c.GetRateLimiter("rl:" + key)
					// Configured once per identity, outside the measured
					// decision as far as possible: a real service would
					// configure its limiters at start.
					if _, err := l.TrySetRate(ctx, redisson.Overall, rateLimit, ratePeriod); err != nil {
						return false, err
					}
					mu.Lock()
					limiters[key] = l
					mu.Unlock()
				}
				return l.TryAcquire(ctx, 1)
			}
		}),
	}
}

// hotOurRateLibs returns our keyed limiters for the hot-identity table,
// plain and in local-quota mode, with the limits of its peers.
func hotOurRateLibs() []rateLib {
	lib := func(algo, settings string, make func(c *redisson.Client) redisson.KeyedLimiter) rateLib {
		return rateLib{name: "redisson", algo: algo, settings: settings, kind: kindOurs,
			open: func(_ context.Context, rdb *redis.Client) (func(context.Context, string) (bool, error), error) {
				c, err := redisson.New(rdb, nil)
				if err != nil {
					return nil, err
				}
				l := make(c)
				return func(ctx context.Context, key string) (bool, error) {
					d, err := l.Allow(ctx, key, 1)
					return d.Allowed, err
				}, nil
			}}
	}
	q := redisson.LocalQuota{Chunk: 1000}
	return []rateLib{
		lib("GCRA", "GetGCRALimiter(10^6 per 1s, burst 2^30)", func(c *redisson.Client) redisson.KeyedLimiter {
			return c.GetGCRALimiter("hg", hotGCRARate, time.Second, hotGCRABurst)
		}),
		lib("GCRA", "same, WithLocalQuota(Chunk 1000)", func(c *redisson.Client) redisson.KeyedLimiter {
			return c.GetGCRALimiter("hgq", hotGCRARate, time.Second, hotGCRABurst).WithLocalQuota(q)
		}),
		lib("fixed window", "GetFixedWindowLimiter(10^12 per 1s)", func(c *redisson.Client) redisson.KeyedLimiter {
			return c.GetFixedWindowLimiter("hf", hotFixedLimit, time.Second)
		}),
		lib("fixed window", "same, WithLocalQuota(Chunk 1000)", func(c *redisson.Client) redisson.KeyedLimiter {
			return c.GetFixedWindowLimiter("hfq", hotFixedLimit, time.Second).WithLocalQuota(q)
		}),
	}
}
