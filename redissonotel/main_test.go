package redissonotel_test

import (
	"testing"

	"github.com/goredisson/redisson/internal/redistest"
)

// TestMain stops the shared redis-server and checks for leaked goroutines.
func TestMain(m *testing.M) { redistest.Main(m) }
