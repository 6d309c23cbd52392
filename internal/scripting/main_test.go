package scripting

import (
	"context"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// testCtx returns a context that ends after d or with the test.
func testCtx(t testing.TB, d time.Duration) context.Context { return redistest.Ctx(t, d) }

// eventually polls cond every 10ms until it holds or d passes.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	redistest.Eventually(t, d, what, cond)
}
