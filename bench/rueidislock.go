package main

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"
)

// --- redis/rueidis rueidislock ------------------------------------------

// rueidislock talks to Redis through its own rueidis client (one per
// simulated process, auto-pipelining, waiting on client-side-caching
// invalidations instead of polling), so go-redis hooks do not see its
// round trips: its rows count Redis commands (INFO commandstats) only.
type rueidisMutex struct {
	l       rueidislock.Locker
	name    string
	release func()
}

func (m *rueidisMutex) lock(ctx context.Context) error {
	_, cancel, err := m.l.WithContext(ctx, m.name)
	if err != nil {
		return err
	}
	m.release = cancel
	return nil
}

func (m *rueidisMutex) unlock(context.Context) error {
	f := m.release
	m.release = nil
	if f == nil {
		return errors.New("rueidislock: not held")
	}
	f() // cancels the lock's context and waits for the release
	return nil
}

// rueidislockLib: one Locker per client with one key per lock
// (KeyMajority 1: a single server), NOLOOP tracking (Redis >= 7.0.5) and
// the same lease as the others; its other settings are its defaults.
func rueidislockLib() lockLib {
	return lockLib{name: "redis/rueidis rueidislock", settings: "KeyMajority 1, NoLoopTracking", kind: kindPeer,
		open: func(rdbs []redis.UniversalClient) (func(int, string) mutex, func(), error) {
			ls := make([]rueidislock.Locker, 0, len(rdbs))
			closeAll := func() {
				for _, l := range ls {
					l.Close()
				}
			}
			for _, rdb := range rdbs {
				l, err := rueidislock.NewLocker(rueidislock.LockerOption{
					ClientOption:   rueidis.ClientOption{InitAddress: addrsOf(rdb)},
					KeyMajority:    1,
					KeyValidity:    leaseTTL,
					NoLoopTracking: true,
				})
				if err != nil {
					closeAll()
					return nil, nil, err
				}
				ls = append(ls, l)
			}
			return func(i int, name string) mutex {
				return &rueidisMutex{l: ls[i], name: name}
			}, closeAll, nil
		}}
}
