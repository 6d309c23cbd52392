package main

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	rsredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// errGaveUp is what a mutex returns when its library stopped retrying
// before ctx ended (redislock's ErrNotObtained, redsync's ErrFailed): the
// caller tries again, and the wait keeps counting from the first try.
var errGaveUp = errors.New("library gave up")

// leaseTTL is the lease every library's lock is taken with (redsync's
// default expiry is 8s and is kept in its "defaults" rows).
const leaseTTL = 10 * time.Second

// mutex is one owner of one named lock. lock waits until held or ctx ends.
type mutex interface {
	lock(ctx context.Context) error
	unlock(ctx context.Context) error
}

// lockLib is one lock library with one setting. open prepares it on the
// given go-redis clients (one per simulated process, or one per Redis
// master for Redlock) and returns a factory of owners.
type lockLib struct {
	name, settings string
	kind           kind
	open           func(rdbs []redis.UniversalClient) (newMutex func(client int, name string) mutex, close func(), err error)
}

// --- ours -------------------------------------------------------------

type oursMutex struct{ l *redisson.Lock }

func (m oursMutex) lock(ctx context.Context) error {
	ok, err := m.l.TryLock(ctx, time.Hour, leaseTTL)
	if err == nil && !ok {
		return errGaveUp
	}
	return err
}

func (m oursMutex) unlock(ctx context.Context) error { return m.l.Unlock(ctx) }

// oursLock is our Lock (fair: our FairLock) with default Options.
func oursLock(fair bool) lockLib {
	return oursLockWith(fair, "defaults", nil)
}

// oursLockWith is oursLock on clients made with opts, described by settings.
func oursLockWith(fair bool, settings string, opts *redisson.Options) lockLib {
	name := "redisson Lock"
	if fair {
		name = "redisson FairLock"
	}
	return lockLib{name: name, settings: settings, kind: kindOurs,
		open: func(rdbs []redis.UniversalClient) (func(int, string) mutex, func(), error) {
			cs, err := newClients(rdbs, opts)
			if err != nil {
				return nil, nil, err
			}
			return func(i int, name string) mutex {
				if fair {
					return oursMutex{cs[i].GetFairLock(name)}
				}
				return oursMutex{cs[i].GetLock(name)}
			}, func() { closeClients(cs) }, nil
		}}
}

func newClients(rdbs []redis.UniversalClient, opts *redisson.Options) ([]*redisson.Client, error) {
	var cs []*redisson.Client
	for _, rdb := range rdbs {
		c, err := redisson.New(rdb, opts)
		if err != nil {
			closeClients(cs)
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

func closeClients(cs []*redisson.Client) {
	for _, c := range cs {
		_ = c.Close()
	}
}

type oursRedLock struct{ m *redisson.RedLock }

func (m oursRedLock) lock(ctx context.Context) error {
	ok, err := m.m.TryLock(ctx, time.Hour, leaseTTL)
	if err == nil && !ok {
		return errGaveUp
	}
	return err
}

func (m oursRedLock) unlock(ctx context.Context) error { return m.m.Unlock(ctx) }

// oursRedLockLib is our RedLock over one lock per given client (server).
func oursRedLockLib() lockLib {
	return lockLib{name: "redisson RedLock", settings: "defaults", kind: kindOurs,
		open: func(rdbs []redis.UniversalClient) (func(int, string) mutex, func(), error) {
			cs, err := newClients(rdbs, nil)
			if err != nil {
				return nil, nil, err
			}
			return func(_ int, name string) mutex {
				locks := make([]*redisson.Lock, len(cs))
				for i, c := range cs {
					locks[i] = c.GetLock(name)
				}
				return oursRedLock{redisson.NewRedLock(locks...)}
			}, func() { closeClients(cs) }, nil
		}}
}

// --- bsm/redislock ----------------------------------------------------

type redislockMutex struct {
	c     *redislock.Client
	name  string
	retry func() redislock.RetryStrategy
	held  *redislock.Lock
}

func (m *redislockMutex) lock(ctx context.Context) error {
	var opt *redislock.Options
	if m.retry != nil {
		opt = &redislock.Options{RetryStrategy: m.retry()}
	}
	l, err := m.c.Obtain(ctx, m.name, leaseTTL, opt)
	// Without a deadline on ctx, Obtain retries for one TTL and then
	// returns context.DeadlineExceeded of its own context: a give-up too.
	if errors.Is(err, redislock.ErrNotObtained) || (errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil) {
		return errGaveUp
	}
	m.held = l
	return err
}

func (m *redislockMutex) unlock(ctx context.Context) error {
	l := m.held
	m.held = nil
	if l == nil {
		return redislock.ErrLockNotHeld
	}
	return l.Release(ctx)
}

// redislockLib: settings "defaults" (no retry: one attempt, as in its README's
// first example), "README retry" (linear 100ms, its retry example without
// the 3-try limit) or "linear 1ms" (its best setting for hand-off).
func redislockLib(settings string, backoff time.Duration) lockLib {
	var retry func() redislock.RetryStrategy
	if backoff > 0 {
		retry = func() redislock.RetryStrategy { return redislock.LinearBackoff(backoff) }
	}
	return lockLib{name: "bsm/redislock", settings: settings, kind: kindPeer,
		open: func(rdbs []redis.UniversalClient) (func(int, string) mutex, func(), error) {
			cs := make([]*redislock.Client, len(rdbs))
			for i, rdb := range rdbs {
				cs[i] = redislock.New(rdb)
			}
			return func(i int, name string) mutex {
				return &redislockMutex{c: cs[i], name: name, retry: retry}
			}, func() {}, nil
		}}
}

// --- go-redsync/redsync -----------------------------------------------

type redsyncMutex struct{ m *redsync.Mutex }

func (m redsyncMutex) lock(ctx context.Context) error {
	err := m.m.LockContext(ctx)
	var taken *redsync.ErrTaken
	if err != nil && ctx.Err() == nil && (errors.Is(err, redsync.ErrFailed) || errors.As(err, &taken)) {
		return errGaveUp
	}
	return err
}

func (m redsyncMutex) unlock(ctx context.Context) error {
	_, err := m.m.UnlockContext(ctx)
	return err
}

// redsyncLib: one pool per client (single-server rows: client i is
// simulated process i), or all clients as the pools of one Redlock
// (redlock). retryDelay 0 keeps redsync's defaults (8s expiry, 32 tries,
// 50-250ms random delay); otherwise that delay and unlimited tries.
func redsyncLib(settings string, retryDelay time.Duration, redlock bool) lockLib {
	var opts []redsync.Option
	if retryDelay > 0 {
		opts = append(opts, redsync.WithRetryDelay(retryDelay), redsync.WithTries(math.MaxInt32))
	}
	return lockLib{name: "go-redsync/redsync", settings: settings, kind: kindPeer,
		open: func(rdbs []redis.UniversalClient) (func(int, string) mutex, func(), error) {
			var rss []*redsync.Redsync
			if redlock {
				var pools []rsredis.Pool
				for _, rdb := range rdbs {
					pools = append(pools, goredis.NewPool(rdb))
				}
				rss = append(rss, redsync.New(pools...))
			} else {
				for _, rdb := range rdbs {
					rss = append(rss, redsync.New(goredis.NewPool(rdb)))
				}
			}
			return func(i int, name string) mutex {
				return redsyncMutex{rss[min(i, len(rss)-1)].NewMutex(name, opts...)}
			}, func() {}, nil
		}}
}

// --- the floor ----------------------------------------------------------

var scriptOne = redis.NewScript("return 1")

// floorMutex makes one trivial round trip per lock and per unlock: EVALSHA
// of `return 1`, or PING. With several clients (Redlock) it makes one to
// each, in parallel when fanOut is set.
type floorMutex struct {
	rdbs   []redis.UniversalClient
	ping   bool
	fanOut bool
	key    string // the EVALSHA's one key: the lock's name, so that a Cluster routes it by slot
}

func (m floorMutex) one(ctx context.Context, rdb redis.UniversalClient) error {
	if m.ping {
		return rdb.Ping(ctx).Err()
	}
	return scriptOne.Run(ctx, rdb, []string{m.key}).Err()
}

func (m floorMutex) lock(ctx context.Context) error {
	if !m.fanOut {
		for _, rdb := range m.rdbs {
			if err := m.one(ctx, rdb); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make(chan error, len(m.rdbs))
	for _, rdb := range m.rdbs {
		go func() { errs <- m.one(ctx, rdb) }()
	}
	var err error
	for range m.rdbs {
		err = errors.Join(err, <-errs)
	}
	return err
}

func (m floorMutex) unlock(ctx context.Context) error { return m.lock(ctx) }

// floorLib: "2 × EVALSHA" (or PING) per lock+unlock on one server; with
// all=true one per server per step (Redlock floors), sequential or fanned out.
func floorLib(settings string, ping, all, fanOut bool) lockLib {
	name := "floor"
	return lockLib{name: name, settings: settings, kind: kindFloor,
		open: func(rdbs []redis.UniversalClient) (func(int, string) mutex, func(), error) {
			return func(i int, name string) mutex {
				if all {
					return floorMutex{rdbs: rdbs, ping: ping, fanOut: fanOut, key: name}
				}
				return floorMutex{rdbs: rdbs[i : i+1], ping: ping, key: name}
			}, func() {}, nil
		}}
}
