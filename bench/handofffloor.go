package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// The hand-off floor: the least a lock that wakes its waiters by pub/sub
// can do between one holder's unlock and the next holder's lock returning,
// which is the unlock's trip to Redis, one message and one round trip.
// Waiters queue their ids in a Redis list; the unlock script deletes the
// lock, pops the next waiter's id and publishes it; only that waiter wakes,
// and it makes one try (SET NX PX), so no try races it. There is no fencing
// token, no re-entry, no resend safety and no lease-loss report, and a
// waiter that died stays queued until the next unlock pops it (its
// successor then waits for the recheck). It is not a lock to use: it is the
// yardstick of the hand-off tables' "vs floor" column.

var (
	floorTry = redis.NewScript(`if redis.call('set', KEYS[1], ARGV[1], 'nx', 'px', ARGV[2]) then return 1 end return 0`)
	floorRel = redis.NewScript(`if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('del', KEYS[1])
local next = redis.call('lpop', KEYS[2])
if next then redis.call('publish', KEYS[3], next) end
return 1`)
)

// floorWaiters is one client's waiters by id, woken by its subscription.
type floorWaiters struct {
	mu   sync.Mutex
	byID map[string]chan struct{}
}

func (w *floorWaiters) add(id string, ch chan struct{}) {
	w.mu.Lock()
	w.byID[id] = ch
	w.mu.Unlock()
}

func (w *floorWaiters) drop(id string) {
	w.mu.Lock()
	delete(w.byID, id)
	w.mu.Unlock()
}

func (w *floorWaiters) wake(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ch, ok := w.byID[id]; ok {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

type floorHandoffMutex struct {
	err     error // of the set-up (subscribing), returned by lock
	rdb     redis.UniversalClient
	waiters *floorWaiters
	keys    []string // lock, queue, channel
	token   string
	ids     *atomic.Int64
	client  int
}

// floorRecheck bounds a wait, so that a waiter whose wake-up went to a
// queued id that left does not wait for ever. It is long, so that rechecks
// add no load that would keep the machine busier than the libraries' runs
// (a busy machine wakes faster).
const floorRecheck = time.Second

func (m *floorHandoffMutex) try(ctx context.Context) (bool, error) {
	ok, err := floorTry.Run(ctx, m.rdb, m.keys[:1], m.token, leaseTTL.Milliseconds()).Int()
	return ok == 1, err
}

// leave takes a waiter that was not popped out of the queue.
func (m *floorHandoffMutex) leave(ctx context.Context, id string) {
	m.waiters.drop(id)
	m.rdb.LRem(context.WithoutCancel(ctx), m.keys[1], 1, id)
}

func (m *floorHandoffMutex) lock(ctx context.Context) error {
	if m.err != nil {
		return m.err
	}
	if ok, err := m.try(ctx); ok || err != nil {
		return err
	}
	for {
		id := fmt.Sprintf("%d:%d", m.client, m.ids.Add(1))
		ch := make(chan struct{}, 1)
		m.waiters.add(id, ch)
		err := m.rdb.RPush(ctx, m.keys[1], id).Err()
		var ok bool
		if err == nil {
			ok, err = m.try(ctx) // an unlock between the first try and the queueing woke nobody
		}
		if ok || err != nil {
			m.leave(ctx, id)
			return err
		}
		t := time.NewTimer(floorRecheck)
		select {
		case <-ch: // popped by an unlock: try once
			m.waiters.drop(id)
		case <-t.C:
			m.leave(ctx, id)
		case <-ctx.Done():
			t.Stop()
			m.leave(ctx, id)
			return ctx.Err()
		}
		t.Stop()
		if ok, err := m.try(ctx); ok || err != nil {
			return err
		}
	}
}

func (m *floorHandoffMutex) unlock(ctx context.Context) error {
	ok, err := floorRel.Run(ctx, m.rdb, m.keys, m.token).Int()
	if err == nil && ok != 1 {
		err = errors.New("floor: unlock of a lock not held")
	}
	return err
}

// handoffFloorLib is the hand-off floor on every client (one subscription
// each to the channels of the names used).
func handoffFloorLib() lockLib {
	return lockLib{name: "floor", settings: "unlock pops the next waiter and publishes its id; it makes 1 × SET NX PX (no lock guarantees)", kind: kindFloor,
		open: func(rdbs []redis.UniversalClient) (func(int, string) mutex, func(), error) {
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			var pss []*redis.PubSub
			var ws []*floorWaiters
			var ids, tokens atomic.Int64
			closeAll := func() {
				cancel()
				for _, ps := range pss {
					ps.Close()
				}
				wg.Wait()
			}
			for _, rdb := range rdbs {
				ps := rdb.Subscribe(ctx) // channels join when a name is first used
				pss = append(pss, ps)
				w := &floorWaiters{byID: map[string]chan struct{}{}}
				ws = append(ws, w)
				wg.Go(func() {
					for {
						msg, err := ps.Receive(ctx)
						if err != nil {
							if ctx.Err() != nil {
								return
							}
							time.Sleep(10 * time.Millisecond) // go-redis re-dials; waiters re-check meanwhile
							continue
						}
						if m, ok := msg.(*redis.Message); ok {
							w.wake(m.Payload)
						}
					}
				})
			}
			var mu sync.Mutex
			subscribed := map[string]error{}
			return func(i int, name string) mutex {
				tag := "{floor:" + name + "}"
				channel := tag + ":wake"
				mu.Lock()
				err, done := subscribed[channel]
				if !done {
					for _, ps := range pss {
						if e := ps.Subscribe(ctx, channel); e != nil {
							err = fmt.Errorf("floor: subscribe: %w", e)
						}
					}
					subscribed[channel] = err
				}
				mu.Unlock()
				return &floorHandoffMutex{err: err, rdb: rdbs[i], waiters: ws[i], keys: []string{tag + ":lock", tag + ":queue", channel},
					token: fmt.Sprint(tokens.Add(1)), ids: &ids, client: i}
			}, closeAll, nil
		}}
}
