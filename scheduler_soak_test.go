//go:build soak

package redisson

import (
	"testing"
	"time"
)

// TestSoakSchedulerProcesses is TestSchedulerProcessHistory at 10,000
// instants (20 ms apart: about 3.5 minutes).
func TestSoakSchedulerProcesses(t *testing.T) {
	testSchedulerProcesses(t, 10000, 20*time.Millisecond)
}
