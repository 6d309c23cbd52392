package main

// ===========================================================================
// OUR RATE LIMITERS: filled in by the lead after merging the rate-limiter
// branches. Return one rateLib per algorithm, kind kindOurs, with algo
// matching the peer of the same algorithm ("GCRA" for redis_rate,
// "fixed window" for ulule/limiter) so "vs best peer" compares like with
// like, and the same rateLimit per ratePeriod. A sketch:
//
//	func ourRateLibs() []rateLib {
//		ours := func(algo string, newDecide func(c *redisson.Client) func(ctx context.Context, key string) (bool, error)) rateLib {
//			return rateLib{name: "redisson", algo: algo, settings: "defaults", kind: kindOurs,
//				open: func(_ context.Context, rdb *redis.Client) (func(context.Context, string) (bool, error), error) {
//					c, err := redisson.New(rdb, nil) // closing: see note below
//					if err != nil {
//						return nil, err
//					}
//					return newDecide(c), nil
//				}}
//		}
//		return []rateLib{
//			ours("GCRA", func(c *redisson.Client) func(context.Context, string) (bool, error) {
//				l := c.GetGCRALimiter("bench:gcra", rateLimit, ratePeriod, rateLimit)
//				return func(ctx context.Context, key string) (bool, error) {
//					d, err := l.Allow(ctx, key, 1)
//					return d.Allowed, err
//				}
//			}),
//			ours("fixed window", ...c.GetFixedWindowLimiter("bench:fw", rateLimit, ratePeriod)...),
//			// Redisson's RRateLimiter (sliding window, one object per identity):
//			// c.GetRateLimiter("bench:rl:"+key), TrySetRate once per key, then TryAcquire(ctx, 1).
//			ours("sliding window (RRateLimiter)", ...),
//		}
//	}
//
// Note: rateLib.open has no close; a redisson.Client left open keeps its
// background goroutines until the process ends, which is harmless here, or
// add a close func to rateLib when filling this in.
// ===========================================================================

// ourRateLibs returns our rate limiters for the rate scenario; none yet.
func ourRateLibs() []rateLib {
	return nil
}
