package redisson

import "time"

// ClientSideCaching configures the client-side cache of the objects
// created with WithClientSideCaching (Options.ClientSideCaching).
//
// The cache is kept fresh by Redis itself (server-assisted client-side
// caching, CLIENT TRACKING in broadcast mode): the client keeps one
// connection of its own on which the server reports every write of a key
// under Prefixes, whoever made it (this library, another go-redis client,
// redis-cli, a Java service), and the key's cached values are dropped when
// the report arrives. The connection is dialled lazily, by the first read
// of a cached object.
type ClientSideCaching struct {
	// MaxEntries bounds the values held in the cache (a bucket's value, a
	// map entry, or the knowledge that either is absent, each count one);
	// beyond it arbitrary keys are dropped with all their values.
	// Default 10000.
	MaxEntries int

	// TTL bounds how long a value is served from the cache after it was
	// read. Default 0: until it is invalidated, evicted, or its key
	// expires in Redis (a key's expiry is read with its value).
	TTL time.Duration

	// Prefixes are the key prefixes Redis reports writes of (CLIENT
	// TRACKING ... BCAST PREFIX). Only objects whose name starts with one
	// of them are cached; the others read from Redis every time. Default
	// none: every key, which makes Redis send this client a message for
	// every write on the server (cheap on a server mostly read, heavy on
	// one mostly written).
	Prefixes []string
}
