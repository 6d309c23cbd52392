package redisson

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// janitorService deletes keys that only had to outlive one call, such as the latch
// a full release leaves for a resent call: once the call has returned,
// go-redis will not resend it. Keys are deleted in the background in
// pipelined batches (one round trip per batch), so that they do not pile up
// for the whole retry window; keys it has not deleted when the client closes
// expire on their own.
type janitorService struct {
	rdb      redis.UniversalClient
	topo     topology
	interval time.Duration
	emit     *emitter

	mu   sync.Mutex
	keys []string
	kick chan struct{}
	loop *lazyLoop // started by the first key
}

// janitorBatch is the queue length that triggers a flush before the next
// interval.
const janitorBatch = 256

func newJanitor(rdb redis.UniversalClient, topo topology, em *emitter, interval time.Duration) *janitorService {
	return &janitorService{
		rdb:      rdb,
		topo:     topo,
		emit:     em,
		interval: interval,
		kick:     make(chan struct{}, 1),
		loop:     newLazyLoop(),
	}
}

// add queues key for deletion.
func (j *janitorService) add(key string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.loop.start(j.run) {
		return
	}
	j.keys = append(j.keys, key)
	if len(j.keys) >= janitorBatch {
		select {
		case j.kick <- struct{}{}:
		default:
		}
	}
}

// run flushes every interval, or at once when the queue is long, until ctx
// (the lazyLoop's) is cancelled.
func (j *janitorService) run(ctx context.Context) {
	t := time.NewTicker(j.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-j.kick:
		}
		j.flush()
	}
}

func (j *janitorService) flush() {
	j.mu.Lock()
	keys := j.keys
	j.keys = nil
	j.mu.Unlock()
	if len(keys) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), j.interval+time.Second)
	defer cancel()
	// One UNLINK per group of keys in one slot (on Cluster) or per batch
	// (elsewhere): the server's work per deleted key is then the deletion
	// alone, not a command of its own.
	groups := map[int][]string{}
	for _, k := range keys {
		slot := j.topo.slot(k)
		groups[slot] = append(groups[slot], k)
	}
	pipe := j.rdb.Pipeline()
	for _, g := range groups {
		for len(g) > 0 {
			n := min(len(g), janitorBatch)
			pipe.Unlink(ctx, g[:n]...)
			g = g[n:]
		}
	}
	if _, err := pipe.Exec(ctx); err != nil { // a key not deleted expires anyway
		j.emit.emit(Event{Type: EventJanitorFailed, Count: len(keys), Err: err})
	}
}

// close stops the loop and waits for it; queued keys are left to expire.
func (j *janitorService) close() { j.loop.close() }
