//go:build soak

package redisson

import (
	"os"
	"strconv"
	"testing"
)

// rqSoakJobs is the number of jobs of the soak's crash tests, in all:
// REDISSON_SOAK_JOBS (make soak sets it; 1,000,000 by default), split
// over the three producers.
func rqSoakJobs(t *testing.T) int {
	n := 1_000_000
	if s := os.Getenv("REDISSON_SOAK_JOBS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 3 {
			t.Fatalf("REDISSON_SOAK_JOBS=%q: want a number of jobs, at least 3", s)
		}
		n = v
	}
	return n
}

// TestSoakReliableQueueCrashHistory is TestReliableQueueCrashHistory with
// REDISSON_SOAK_JOBS jobs, for `make soak`.
func TestSoakReliableQueueCrashHistory(t *testing.T) {
	defer func(n int) { rqJobsPerProducer = n }(rqJobsPerProducer)
	rqJobsPerProducer = rqSoakJobs(t) / 3
	TestReliableQueueCrashHistory(t)
}

// TestSoakReliableQueueClusterCrashHistory is
// TestReliableQueueClusterCrashHistory with REDISSON_SOAK_JOBS jobs.
func TestSoakReliableQueueClusterCrashHistory(t *testing.T) {
	defer func(n int) { rqJobsPerProducer = n }(rqJobsPerProducer)
	rqJobsPerProducer = rqSoakJobs(t) / 3
	TestReliableQueueClusterCrashHistory(t)
}
