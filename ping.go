package redisson

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// allScripts is every script of the package, in the order scripts.go
// declares them (mustScript appends each): what Ping loads.
var allScripts []*script

// Ping is the Client's readiness check: it pings every master (on Cluster
// each master, with Sentinel the current master), loads every script the
// package uses there (SCRIPT LOAD, one pipeline per master), and detects
// the server's Capabilities, so that it fails when the objects' calls
// would: a wrong or missing password, a server that cannot be reached,
// scripting disabled or refused by an ACL. New does no I/O; call Ping
// where a service checks its dependencies (at start-up, in a readiness
// probe). The loads are no EventScriptReloaded; a script flushed after
// them and loaded again on NOSCRIPT is one. A server that refuses the
// detection's INFO or COMMAND (some proxies rename them away) passes Ping
// once the scripts load; Capabilities then returns that refusal.
//
// It returns nil when every master answered and loaded the scripts;
// ErrClientClosed after Close; ErrAuth, ErrUnreachable, or ErrUnsupported
// (scripting renamed away or absent), naming the failing master on
// Cluster; another Redis error; or ctx's error when ctx ends first.
func (c *Client) Ping(ctx context.Context) error {
	if c.closed.Load() {
		return ErrClientClosed
	}
	if err := c.pingMasters(ctx); err != nil {
		return pingErr("ping", err)
	}
	if err := c.scripts.r.Preload(ctx, allScripts); err != nil {
		return pingErr("script load", err)
	}
	if _, err := c.caps.get(ctx); err != nil && !errors.Is(err, ErrUnsupported) {
		return pingErr("capabilities", err)
	}
	return nil
}

// pingMasters sends PING to every master on Cluster, elsewhere to the one
// node the client serves (with Sentinel, the current master).
func (c *Client) pingMasters(ctx context.Context) error {
	cc := c.topo.cluster
	if cc == nil {
		return c.rdb.Ping(ctx).Err()
	}
	return cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		if err := node.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("%s: %w", node.Options().Addr, err)
		}
		return nil
	})
}

// pingErr is the one shape of Ping's errors, `redisson: ping: <step>:
// <cause>`, the cause classified.
func pingErr(step string, err error) error {
	return &namedError{object: "ping: " + step, cause: classify(err)}
}
