//go:build soak

package redisson

import "testing"

// TestSoakReliableQueueCrashHistory is TestReliableQueueCrashHistory with
// 100,000 jobs per producer (300,000 in all), for `make soak`.
func TestSoakReliableQueueCrashHistory(t *testing.T) {
	defer func(n int) { rqJobsPerProducer = n }(rqJobsPerProducer)
	rqJobsPerProducer = 100_000
	TestReliableQueueCrashHistory(t)
}
