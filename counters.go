package redisson

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// What the objects whose state is one integer key share (Semaphore,
// CountDownLatch, AtomicLong, IdGenerator): reading that key, the call
// markers that make their scripts idempotent under go-redis resends, and the
// re-check that bounds their waiters. Their errors come from intKeyErr.

// syncRecheck bounds every wait of a Semaphore acquirer and of a
// CountDownLatch waiter: a release or count-down message that was lost (a
// writer that does not publish, a message sent while the pub/sub connection
// was down) delays a waiter by at most this much, never strands it.
const syncRecheck = time.Second

// forgetCallMarker queues a call marker for deletion once its call has
// returned, when the call may have written it: go-redis will not resend the
// call now.
func forgetCallMarker(c *Client, marker string, err error) {
	if err == nil || mayHaveRun(err) {
		c.janitor.add(marker)
	}
}

// readIntKey reads the integer at name (0 when missing) for the object kind.
func readIntKey(ctx context.Context, c *Client, kind, name string) (int64, error) {
	c.trip(ctx, 1)
	v, err := c.rdb.Get(ctx, name).Result()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, intKeyErr(kind, name, err)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, intKeyErr(kind, name, fmt.Errorf("value %q is not an integer", v))
	}
	return n, nil
}
