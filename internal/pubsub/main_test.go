package pubsub

import (
	"testing"

	"github.com/goredisson/redisson/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }
