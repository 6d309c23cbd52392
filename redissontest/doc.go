// Package redissontest runs Redis for the tests of programs that use
// redisson: an embedded Redis in the test process, or a real redis-server
// on a free loopback port.
//
// NewEmbedded starts a miniredis (github.com/alicebob/miniredis/v2) whose
// clock follows real time. miniredis expires keys only when its clock is
// moved, so without this lock leases, semaphore permits and rate-limit
// windows would never run out in a test; here a goroutine moves the clock by
// the real elapsed time every 10 ms, and keys expire as they would on a
// server (to within that tick). It needs nothing installed and starts in
// microseconds: use it for unit tests of handlers and services.
//
//	func TestCheckout(t *testing.T) {
//		_, rdb := redissontest.NewEmbedded(t)
//		client, err := redisson.New(rdb, nil)
//		...
//	}
//
// Start runs a real redis-server instead (it must be installed; the test
// fails saying so otherwise), for behaviour miniredis does not have or
// does differently: Redis Cluster, replication, exact Lua and pub/sub
// semantics, memory and performance.
//
// Both register their clean-up with t.Cleanup: the server stops and the
// client is closed when the test ends. StartEmbedded is NewEmbedded for
// programs without a testing.TB (demos); its caller closes the server.
package redissontest
