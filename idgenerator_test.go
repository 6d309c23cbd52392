package redisson

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// blockHook counts the idgen_next script calls a go-redis client completes
// (a NOSCRIPT answer, retried after SCRIPT LOAD, is not counted): one per
// reserved block.
type blockHook struct{ n atomic.Int64 }

func (h *blockHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *blockHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		args := cmd.Args()
		if cmd.Name() == "evalsha" && len(args) > 1 && args[1] == scriptIDGenNext.SHA() && !isNoScript(err) {
			h.n.Add(1)
		}
		return err
	}
}

func (h *blockHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func TestIdGeneratorBasics(t *testing.T) {
	rdb := sharedRedis(t)
	hook := &blockHook{}
	rdb.AddHook(hook)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := typedName(t, rdb, "allocation")
	g := c.GetIdGenerator(name)

	if ok, err := g.TryInit(ctx, 100, 10); err != nil || !ok {
		t.Fatalf("TryInit = %v, %v; want true, nil", ok, err)
	}
	if ok, err := g.TryInit(ctx, 7, 3); err != nil || ok {
		t.Fatalf("second TryInit = %v, %v; want false, nil", ok, err)
	}
	for want := int64(100); want < 125; want++ {
		id, err := g.NextID(ctx)
		if err != nil || id != want {
			t.Fatalf("NextID = %d, %v; want %d", id, err, want)
		}
	}
	// Three blocks of 10: the counter is the first id of the next block.
	if v := rdb.Get(ctx, name).Val(); v != "130" {
		t.Fatalf("counter = %q; want 130", v)
	}
	if v := rdb.Get(ctx, suffixName(name, "allocation")).Val(); v != "10" {
		t.Fatalf("allocation = %q; want 10", v)
	}
	if n := hook.n.Load(); n != 3 {
		t.Fatalf("%d block reservations for 25 ids in blocks of 10; want 3", n)
	}

	// A second handle takes the next block.
	if id, err := c.GetIdGenerator(name).NextID(ctx); err != nil || id != 130 {
		t.Fatalf("other handle NextID = %d, %v; want 130", id, err)
	}
	if id, err := g.NextID(ctx); err != nil || id != 125 {
		t.Fatalf("NextID = %d, %v; want 125 (rest of the block)", id, err)
	}

	if ok, err := g.Delete(ctx); err != nil || !ok {
		t.Fatalf("Delete = %v, %v; want true", ok, err)
	}
	if n := rdb.Exists(ctx, name, suffixName(name, "allocation")).Val(); n != 0 {
		t.Fatalf("%d keys left after Delete", n)
	}
	// Without TryInit: Redisson's defaults, ids from 1 in blocks of 5000.
	if id, err := g.NextID(ctx); err != nil || id != 1 {
		t.Fatalf("NextID after Delete = %d, %v; want 1", id, err)
	}
	if v := rdb.Get(ctx, name).Val(); v != "5001" {
		t.Fatalf("counter = %q; want 5001", v)
	}
	if v := rdb.Get(ctx, suffixName(name, "allocation")).Val(); v != "5000" {
		t.Fatalf("allocation = %q; want 5000", v)
	}
}

// idGenConcurrent runs clients×goroutines callers, each taking perG ids
// from its client's one handle, and checks uniqueness, per-caller order and
// one reservation per block per handle.
func idGenConcurrent(t *testing.T, rdbs []redis.UniversalClient, name string, alloc int64) {
	const goroutines, perG = 8, 150
	ctx := testCtx(t, time.Minute)
	hooks := make([]*blockHook, len(rdbs))
	gens := make([]*IdGenerator, len(rdbs))
	for i, rdb := range rdbs {
		hooks[i] = &blockHook{}
		rdb.AddHook(hooks[i])
		gens[i] = newClient(t, rdb, nil).GetIdGenerator(name)
	}
	if ok, err := gens[0].TryInit(ctx, 1000, alloc); err != nil || !ok {
		t.Fatalf("TryInit = %v, %v", ok, err)
	}
	ids := make([][]int64, len(gens)*goroutines)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := gens[i%len(gens)]
			for range perG {
				id, err := g.NextID(ctx)
				if err != nil {
					t.Errorf("NextID: %v", err)
					return
				}
				ids[i] = append(ids[i], id)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	seen := map[int64]bool{}
	for i, s := range ids {
		for j, id := range s {
			if seen[id] {
				t.Fatalf("id %d handed out twice", id)
			}
			seen[id] = true
			if j > 0 && id <= s[j-1] {
				t.Fatalf("caller %d got %d after %d; want increasing", i, id, s[j-1])
			}
			if id < 1000 {
				t.Fatalf("id %d below the start 1000", id)
			}
		}
	}
	perHandle := int64(goroutines * perG)
	for i, h := range hooks {
		if got, want := h.n.Load(), (perHandle+alloc-1)/alloc; got != want {
			t.Errorf("client %d: %d block reservations for %d ids in blocks of %d; want %d", i, got, perHandle, alloc, want)
		}
	}
}

func TestIdGeneratorConcurrent(t *testing.T) {
	var rdbs []redis.UniversalClient
	for range 4 {
		rdbs = append(rdbs, sharedRedis(t))
	}
	idGenConcurrent(t, rdbs, typedName(t, rdbs[0], "allocation"), 37)
}

func TestClusterIdGenerator(t *testing.T) {
	cl := redistest.SharedCluster(t)
	var rdbs []redis.UniversalClient
	for range 3 {
		rdbs = append(rdbs, cl.Client(t))
	}
	masters := map[string]bool{}
	ctx := testCtx(t, time.Minute)
	for i := range 6 {
		name := typedName(t, rdbs[0], "allocation")
		if i%2 == 1 {
			name = "{" + name + "}:ids"
			t.Cleanup(func() { rdbs[0].Del(context.Background(), name, suffixName(name, "allocation")) })
		}
		node, err := cl.Client(t).MasterForKey(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		masters[node.Options().Addr] = true
		t.Run(strings.ReplaceAll(name, "/", "."), func(t *testing.T) { idGenConcurrent(t, rdbs, name, 50) })
	}
	if len(masters) < 2 {
		t.Fatalf("names landed on %d masters; want several", len(masters))
	}
}

func TestIdGeneratorErrors(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)

	for _, alloc := range []int64{0, -1} {
		name := typedName(t, rdb, "allocation")
		if ok, err := c.GetIdGenerator(name).TryInit(ctx, 1, alloc); !errors.Is(err, ErrInvalidAllocation) || ok {
			t.Fatalf("TryInit(1, %d) = %v, %v; want ErrInvalidAllocation", alloc, ok, err)
		}
		if n := rdb.Exists(ctx, name, suffixName(name, "allocation")).Val(); n != 0 {
			t.Fatalf("%d keys after a rejected TryInit", n)
		}
	}

	cases := []struct {
		what    string
		counter func(name string) // sets up the counter key, nil: none
		alloc   string            // stored allocation, "": none
		want    error
		init    bool // TryInit fails too
	}{
		{"counter is a hash", func(n string) { rdb.HSet(ctx, n, "a", 1) }, "", ErrWrongType, true},
		{"allocation is a list", nil, "list", ErrWrongType, true},
		{"counter not an integer", func(n string) { rdb.Set(ctx, n, "abc", 0) }, "", ErrWrongType, true},
		{"allocation not an integer", nil, "x", ErrWrongType, true},
		{"allocation zero", nil, "0", ErrInvalidAllocation, false},
		{"allocation negative", nil, "-4", ErrInvalidAllocation, false},
	}
	for _, tc := range cases {
		t.Run(tc.what, func(t *testing.T) {
			name := typedName(t, rdb, "allocation")
			if tc.counter != nil {
				tc.counter(name)
			}
			switch tc.alloc {
			case "":
			case "list":
				rdb.RPush(ctx, suffixName(name, "allocation"), 1)
			default:
				rdb.Set(ctx, suffixName(name, "allocation"), tc.alloc, 0)
			}
			keys := []string{name, suffixName(name, "allocation")}
			before := keysState(t, rdb, keys...)
			g := c.GetIdGenerator(name)
			if _, err := g.NextID(ctx); !errors.Is(err, tc.want) {
				t.Fatalf("NextID: %v; want %v", err, tc.want)
			}
			if tc.init {
				if _, err := g.TryInit(ctx, 1, 10); !errors.Is(err, tc.want) {
					t.Fatalf("TryInit: %v; want %v", err, tc.want)
				}
			}
			if after := keysState(t, rdb, keys...); after != before {
				t.Fatalf("Redis changed:\n before %s\n after  %s", before, after)
			}
		})
	}

	// A cancelled context: an error, no id, nothing written.
	name := typedName(t, rdb, "allocation")
	g := c.GetIdGenerator(name)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := g.NextID(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("NextID with a cancelled context: %v; want context.Canceled", err)
	}
	if n := rdb.Exists(ctx, name, suffixName(name, "allocation")).Val(); n != 0 {
		t.Fatalf("%d keys after a cancelled NextID", n)
	}
	// A caller waiting for the handle gives up with its context.
	g.lock <- struct{}{} // as if another caller were reserving a block
	wctx, wcancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer wcancel()
	if _, err := g.NextID(wctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("NextID while the handle is busy: %v; want context.DeadlineExceeded", err)
	}
	<-g.lock

	if _, err := c.GetIdGenerator("").NextID(ctx); !errors.Is(err, ErrEmptyName) {
		t.Fatalf("NextID on empty name: %v; want ErrEmptyName", err)
	}
	closed := newClient(t, rdb, nil)
	closed.Close()
	if _, err := closed.GetIdGenerator(name).TryInit(ctx, 1, 1); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("TryInit on a closed client: %v; want ErrClientClosed", err)
	}
}
