package scripting

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// On Cluster a NOSCRIPT loads the script on every master, so one load
// serves the callers of every node: after SCRIPT FLUSH on every master,
// concurrent calls on keys spread over them send one SCRIPT LOAD per master.
func TestClusterLoadOnEveryMaster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	cc := cl.Client(t)
	r := NewRunner(Config{Redis: cc, Cluster: cc})
	ctx := testCtx(t, time.Minute)
	if _, err := apCall(ctx, r, "cl:warm", "warm"); err != nil {
		t.Fatal(err)
	}
	var nodes []*redis.Client
	for _, addr := range cl.Masters(t) {
		n := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { n.Close() })
		if err := n.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if err := n.ConfigResetStat(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	before := r.stats().loads
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Go(func() {
			<-start
			k := "cl:" + strconv.Itoa(i)
			if _, err := apCall(ctx, r, k, k); err != nil {
				t.Error(err)
			}
		})
	}
	close(start)
	wg.Wait()
	if n := r.stats().loads - before; n != 1 {
		t.Errorf("%d load flights after SCRIPT FLUSH; want 1", n)
	}
	for i, n := range nodes {
		if got := redistest.CommandCalls(t, n, "script|load"); got != 1 {
			t.Errorf("master %s: SCRIPT LOAD called %d times; want 1", cl.Masters(t)[i], got)
		}
	}
}
