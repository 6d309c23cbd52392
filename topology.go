package redisson

import (
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// topology is what New learns, once, of the deployment behind the go-redis
// client, and hands to every service (script runner, pub/sub, watchdog,
// janitor) and object: no other code inspects the client's type.
type topology struct {
	// cluster is the Cluster client, nil on a single node or Sentinel.
	cluster *redis.ClusterClient
	// single reports a *redis.Client (a single node, or a Sentinel failover
	// client): one master, whose pub/sub connection may be left on an old
	// master by a failover (see the pub/sub presence check).
	single bool
	// node is a copy of that client's options (nil otherwise), taken by
	// New before any I/O (go-redis writes them while connecting), which
	// the client-side cache dials its tracking connection with.
	node *redis.Options
	// clusterNode is, on Cluster, the options of a connection to one of
	// its nodes (Addr left empty), built from a copy of the Cluster
	// client's options taken by New, which the client-side cache dials a
	// tracking connection per master with.
	clusterNode *redis.Options
}

func topologyOf(rdb redis.UniversalClient) topology {
	cc, _ := rdb.(*redis.ClusterClient)
	t := topology{cluster: cc}
	if cc != nil {
		t.clusterNode = clusterNodeOptions(*cc.Options())
	}
	if c, ok := rdb.(*redis.Client); ok {
		o := *c.Options()
		reinitClient(&o)
		// A config of its own: the user's client writes its own while it
		// connects, and a copy sharing it races with go-redis cloning it.
		o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
		t.single, t.node = true, &o
	}
	return t
}

// isCluster reports whether keys are spread over Redis Cluster slots.
func (t topology) isCluster() bool { return t.cluster != nil }

// slot returns key's hash slot on Cluster, 0 elsewhere: keys of one slot
// can go in one script call or pipeline to one node.
func (t topology) slot(key string) int {
	if t.cluster != nil {
		return hashSlot(key)
	}
	return 0
}

// clusterNodeOptions returns the options go-redis gives a connection to a
// node of a Cluster with options co: how to dial and authenticate.
func clusterNodeOptions(co redis.ClusterOptions) *redis.Options {
	return &redis.Options{
		Dialer:                       co.Dialer,
		Username:                     co.Username,
		Password:                     co.Password,
		CredentialsProvider:          co.CredentialsProvider,
		CredentialsProviderContext:   co.CredentialsProviderContext,
		StreamingCredentialsProvider: co.StreamingCredentialsProvider,
		DialTimeout:                  co.DialTimeout,
		ReadTimeout:                  co.ReadTimeout,
		WriteTimeout:                 co.WriteTimeout,
		ContextTimeoutEnabled:        co.ContextTimeoutEnabled,
		TLSConfig:                    co.TLSConfig,
		DisableIdentity:              co.DisableIdentity,
		IdentitySuffix:               co.IdentitySuffix,
	}
}
