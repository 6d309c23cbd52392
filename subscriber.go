package redisson

import (
	"context"
	"errors"
	"sync"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// subscriber is the go-redis client the pub/sub engine works through: a
// clone of the user's client whose every new connection, after the user's
// own OnConnect, sends CLIENT NO-EVICT on, so that a server with
// maxmemory-clients never evicts the connections that carry lock and
// semaphore wake-ups. CLIENT NO-EVICT applies to the connection that sends
// it only, and a subscribed RESP2 connection accepts nothing but
// (un)subscribe and PING, hence OnConnect, before the first SUBSCRIBE.
//
// The clone is made for a *redis.Client on one node and a
// *redis.ClusterClient (whose OnConnect runs on every node's connections).
// It is not made for a Sentinel failover client: its options carry the
// failover's dialer, and a clone would not be told of failovers (go-redis
// closes the old master's connections only in the client it built), so
// its pub/sub connections keep the user's client and are not marked; nor
// for any other UniversalClient (a Ring). What the clone loses: hooks
// added to the user's client with AddHook (tracing, RedisLogger's
// go-redis logging is global and stays) do not see the pub/sub
// connections' commands, and go-redis's maintenance notifications are off
// on them. The clone is closed by Client.Close, after the engine.
type subscriber struct {
	rdb     redis.UniversalClient // the engine's client: the clone, or the user's
	cluster *redis.ClusterClient  // rdb on Cluster; nil otherwise
	owned   bool                  // rdb is the clone, closed by close
	emit    *emitter
	refused sync.Once // the first refusal of CLIENT NO-EVICT is reported, no other
}

// newSubscriber returns the engine's client for rdb. It does no I/O and
// starts no goroutine.
func newSubscriber(rdb redis.UniversalClient, topo topology, em *emitter) *subscriber {
	s := &subscriber{rdb: rdb, cluster: topo.cluster, emit: em}
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		o := *c.Options()
		reinitCluster(&o)
		o.OnConnect = s.onConnect(o.OnConnect)
		o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
		cc := redis.NewClusterClient(&o)
		s.rdb, s.cluster, s.owned = cc, cc, true
	case *redis.Client:
		if c.Options().Addr == failoverAddr {
			return s
		}
		o := *c.Options()
		reinitClient(&o)
		o.OnConnect = s.onConnect(o.OnConnect)
		o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
		s.rdb, s.owned = redis.NewClient(&o), true
	}
	return s
}

// failoverAddr is the Addr go-redis gives the options of a Sentinel
// failover client.
const failoverAddr = "FailoverClient"

// onConnect runs user (the user's OnConnect, if any) and then CLIENT
// NO-EVICT on. A server without the command (before Redis 7, which has no
// maxmemory-clients either) is left alone; another refusal (an ACL) is
// reported once as EventNoEvictRefused. The connection is kept either way:
// marking it is a protection, not a condition of working.
func (s *subscriber) onConnect(user func(context.Context, *redis.Conn) error) func(context.Context, *redis.Conn) error {
	return func(ctx context.Context, cn *redis.Conn) error {
		if user != nil {
			if err := user(ctx, cn); err != nil {
				return err
			}
		}
		err := classify(cn.Do(ctx, "client", "no-evict", "on").Err())
		if err != nil && !errors.Is(err, ErrUnsupported) {
			s.refused.Do(func() { s.emit.emit(Event{Type: EventNoEvictRefused, Err: err}) })
		}
		return nil
	}
}

// close closes the clone, if one was made.
func (s *subscriber) close() {
	if s.owned {
		_ = s.rdb.Close()
	}
}

// reinitClient undoes what go-redis's option defaults turned into values
// that it would read otherwise when the copy goes through NewClient again
// (a -1 "none" became 0, which a second pass reads as "default").
func reinitClient(o *redis.Options) {
	o.ReadTimeout = reinitTimeout(o.ReadTimeout)
	o.WriteTimeout = reinitTimeout(o.WriteTimeout)
	o.MaxRetries = reinitZero(o.MaxRetries)
	o.MinRetryBackoff = reinitZero(o.MinRetryBackoff)
	o.MaxRetryBackoff = reinitZero(o.MaxRetryBackoff)
}

// reinitCluster is reinitClient for ClusterOptions.
func reinitCluster(o *redis.ClusterOptions) {
	o.MaxRedirects = reinitZero(o.MaxRedirects)
	o.ReadTimeout = reinitZero(o.ReadTimeout)
	o.WriteTimeout = reinitZero(o.WriteTimeout)
	o.MinRetryBackoff = reinitZero(o.MinRetryBackoff)
	o.MaxRetryBackoff = reinitZero(o.MaxRetryBackoff)
}

// reinitTimeout maps an initialised timeout back to what yields it: 0 (no
// deadline) from -1, -1 (no deadline set at all) from -2.
func reinitTimeout[T ~int64](v T) T {
	switch v {
	case 0:
		return -1
	case -1:
		return -2
	}
	return v
}

// reinitZero maps an initialised 0 ("none") back to the -1 that yields it.
func reinitZero[T ~int | ~int64](v T) T {
	if v == 0 {
		return -1
	}
	return v
}
