package redisson

import "github.com/redis/go-redis/v9"

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
}

func topologyOf(rdb redis.UniversalClient) topology {
	cc, _ := rdb.(*redis.ClusterClient)
	t := topology{cluster: cc}
	if c, ok := rdb.(*redis.Client); ok {
		o := *c.Options()
		reinitClient(&o)
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
