package redisson

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// pipeCounter counts what a go-redis client sends: pipelines (each one
// round trip) and single commands, handshakes left out.
type pipeCounter struct{ pipes, cmds, pipeCmds atomic.Int64 }

func (h *pipeCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *pipeCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !benchIsHandshake(cmd.Name()) {
			h.cmds.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (h *pipeCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && !benchIsHandshake(cmds[0].Name()) {
			h.pipes.Add(1)
			h.pipeCmds.Add(int64(len(cmds)))
		}
		return next(ctx, cmds)
	}
}

func (h *pipeCounter) reset() { h.pipes.Store(0); h.cmds.Store(0); h.pipeCmds.Store(0) }

// fillBatch queues calls on five objects named after base; check verifies
// their results once executed.
func fillBatch(b *Batch, base string) (check func(t *testing.T)) {
	bk := GetBatchBucket[string](b, base+":b")
	al := b.GetAtomicLong(base + ":al")
	m := GetBatchMap[string, int64](b, base+":m")
	s := GetBatchSet[string](b, base+":s")
	l := GetBatchList[int64](b, base+":l")
	q := GetBatchQueue[string](b, base+":q")
	set := bk.Set("v")
	get := bk.Get()
	inc := al.IncrementAndGet()
	add := al.AddAndGet(10)
	alGet := al.Get()
	put := m.Put("k", 1)
	put2 := m.Put("k", 2)
	fast := m.FastPut("j", 3)
	mget := m.Get("k")
	rem := m.Remove("j")
	sadd := s.Add("x")
	sadd2 := s.Add("x")
	has := s.Contains("x")
	srem := s.Remove("x")
	ladd := l.Add(7)
	lget := l.Get(0)
	del := bk.Delete()
	offer := q.Offer("job")
	poll := q.Poll()
	empty := q.Poll()
	return func(t *testing.T) {
		t.Helper()
		if err := set.Err(); err != nil {
			t.Errorf("Set: %v", err)
		}
		eq(t, "Get", get, "v", true)
		eq(t, "IncrementAndGet", inc, 1, true)
		eq(t, "AddAndGet", add, 11, true)
		eq(t, "AtomicLong Get", alGet, 11, true)
		eq(t, "Put", put, 0, false)
		eq(t, "Put again", put2, 1, true)
		eq(t, "FastPut", fast, true, true)
		eq(t, "Map Get", mget, 2, true)
		eq(t, "Remove", rem, 3, true)
		eq(t, "Add", sadd, true, true)
		eq(t, "Add again", sadd2, false, false)
		eq(t, "Contains", has, true, true)
		eq(t, "Set Remove", srem, true, true)
		eq(t, "List Add", ladd, 1, true)
		eq(t, "List Get", lget, 7, true)
		eq(t, "Delete", del, true, true)
		if err := offer.Err(); err != nil {
			t.Errorf("Offer: %v", err)
		}
		eq(t, "Poll", poll, "job", true)
		eq(t, "Poll on empty", empty, "", false)
	}
}

func eq[T comparable](t *testing.T, what string, f *Future[T], want T, found bool) {
	t.Helper()
	got, err := f.Result()
	if err != nil || got != want || f.Found() != found {
		t.Errorf("%s = %v (found %v), %v; want %v (found %v)", what, got, f.Found(), err, want, found)
	}
}

func batchKeys(t *testing.T, rdb redis.UniversalClient, base string) {
	t.Cleanup(func() {
		for _, k := range []string{":b", ":al", ":m", ":s", ":l", ":q"} {
			rdb.Del(context.Background(), base+k)
		}
	})
}

// A batch of calls on five objects is one pipeline once its scripts are
// loaded; its Futures hold what the objects' methods return.
func TestBatchOneRoundTrip(t *testing.T) {
	rdb := sharedRedis(t)
	h := &pipeCounter{}
	rdb.AddHook(h)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	for round := 0; round < 3; round++ {
		base := uniqueName(t, rdb)
		batchKeys(t, rdb, base)
		b := c.CreateBatch()
		check := fillBatch(b, base)
		h.reset()
		if err := b.Execute(ctx); err != nil {
			t.Fatal(err)
		}
		check(t)
		// The first round loads the scripts first (one pipeline of SCRIPT
		// LOADs), as Redisson does; then one pipeline per batch.
		want := int64(1)
		if round == 0 {
			want = 2
		}
		if p, n := h.pipes.Load(), h.cmds.Load(); p != want || n != 0 {
			t.Fatalf("round %d: %d pipelines and %d single commands; want %d and 0", round, p, n, want)
		}
	}
}

// An atomic batch is one MULTI/EXEC, scripts sent with EVAL.
func TestBatchAtomic(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	log := newCmdLog(rdb)
	ctx := testCtx(t, time.Minute)
	base := uniqueName(t, rdb)
	batchKeys(t, rdb, base)
	b := c.CreateBatch(BatchAtomic())
	check := fillBatch(b, base)
	log.take()
	if err := b.Execute(ctx); err != nil {
		t.Fatal(err)
	}
	check(t)
	sent := log.take()
	if len(sent) != 22 || sent[0][0] != "MULTI" || sent[len(sent)-1][0] != "EXEC" {
		t.Fatalf("sent %d commands, %q first, %q last; want MULTI, 20 calls, EXEC", len(sent), sent[0], sent[len(sent)-1])
	}
	for _, cmd := range sent {
		if cmd[0] == "EVALSHA" {
			t.Fatalf("atomic batch sent %q: scripts go with EVAL inside MULTI", cmd)
		}
	}
}

// A skip-results batch runs its calls and keeps no result; Execute still
// reports a failure.
func TestBatchSkipResults(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	b := c.CreateBatch(BatchSkipResults())
	f := b.GetAtomicLong(name).AddAndGet(5)
	if err := b.Execute(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := f.Result(); !errors.Is(err, ErrResultSkipped) || v != 0 {
		t.Fatalf("Result = %v, %v; want ErrResultSkipped", v, err)
	}
	if n, err := c.GetAtomicLong(name).Get(ctx); err != nil || n != 5 {
		t.Fatalf("value %d, %v; want 5", n, err)
	}
	rdb.HSet(ctx, name+":h", "f", "v")
	t.Cleanup(func() { rdb.Del(context.Background(), name+":h") })
	b = c.CreateBatch(BatchSkipResults())
	GetBatchBucket[string](b, name+":h").Get()
	if err := b.Execute(ctx); !errors.Is(err, ErrWrongType) {
		t.Fatalf("Execute on a hash = %v; want ErrWrongType", err)
	}
}

// A call failing on the server fails alone: the others run, and Execute
// returns the failure.
func TestBatchCallError(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	rdb.HSet(ctx, name+":h", "f", "v")
	t.Cleanup(func() { rdb.Del(context.Background(), name+":h", name) })
	for _, opts := range [][]BatchOption{nil, {BatchAtomic()}} {
		rdb.Del(ctx, name)
		b := c.CreateBatch(opts...)
		wrong := GetBatchBucket[string](b, name+":h").Set("x")
		ok := GetBatchBucket[string](b, name).Set("y")
		if err := b.Execute(ctx); !errors.Is(err, ErrWrongType) {
			t.Fatalf("Execute = %v; want ErrWrongType", err)
		}
		if err := wrong.Err(); !errors.Is(err, ErrWrongType) {
			t.Fatalf("the hash's Set: %v; want ErrWrongType", err)
		}
		if err := ok.Err(); err != nil {
			t.Fatalf("the other Set: %v", err)
		}
		if v, _ := rdb.HGet(ctx, name+":h", "f").Result(); v != "v" {
			t.Fatalf("the hash changed: %q", v)
		}
		if v, _, err := GetBucket[string](c, name).Get(ctx); err != nil || v != "y" {
			t.Fatalf("bucket %q, %v; want y", v, err)
		}
	}
}

// Bad input is refused when queued and makes Execute send nothing.
func TestBatchBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	closed := newClient(t, rdb, nil)
	closed.Close()
	log := newCmdLog(rdb)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	cases := []struct {
		name  string
		c     *Client
		ctx   context.Context
		queue func(b *Batch) interface{ Err() error }
		want  error
	}{
		{"empty bucket name", c, ctx, func(b *Batch) interface{ Err() error } { return GetBatchBucket[string](b, "").Get() }, ErrEmptyName},
		{"empty atomic long name", c, ctx, func(b *Batch) interface{ Err() error } { return b.GetAtomicLong("").IncrementAndGet() }, ErrEmptyName},
		{"nil value", c, ctx, func(b *Batch) interface{ Err() error } { return GetBatchBucket[*int](b, name).Set(nil) }, ErrNilValue},
		{"nil map key", c, ctx, func(b *Batch) interface{ Err() error } { return GetBatchMap[*int, string](b, name).Put(nil, "v") }, ErrNilValue},
		{"nil map value", c, ctx, func(b *Batch) interface{ Err() error } { return GetBatchMap[string, *int](b, name).FastPut("k", nil) }, ErrNilValue},
		{"nil set member", c, ctx, func(b *Batch) interface{ Err() error } { return GetBatchSet[*int](b, name).Add(nil) }, ErrNilValue},
		{"nil queue element", c, ctx, func(b *Batch) interface{ Err() error } { return GetBatchQueue[*int](b, name).Offer(nil) }, ErrNilValue},
		{"empty queue name", c, ctx, func(b *Batch) interface{ Err() error } { return GetBatchQueue[string](b, "").Poll() }, ErrEmptyName},
		{"nil list element", c, ctx, func(b *Batch) interface{ Err() error } { return GetBatchList[*int](b, name).Add(nil) }, ErrNilValue},
		{"unencodable value", c, ctx, func(b *Batch) interface{ Err() error } { return GetBatchBucket[chan int](b, name).Set(make(chan int)) }, ErrCodec},
		{"zero ttl", c, ctx, func(b *Batch) interface{ Err() error } { return GetBatchBucket[string](b, name).SetWithTTL("v", 0) }, ErrNegativeDuration},
		{"negative list index", c, ctx, func(b *Batch) interface{ Err() error } { return GetBatchList[string](b, name).Get(-1) }, ErrIndexOutOfRange},
		{"closed client", closed, ctx, func(b *Batch) interface{ Err() error } { return GetBatchBucket[string](b, name).Get() }, ErrClientClosed},
		{"cancelled context", c, cancelled, nil, context.Canceled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.c.CreateBatch()
			good := GetBatchBucket[string](b, name).Set("v")
			var bad interface{ Err() error }
			if tc.queue != nil {
				bad = tc.queue(b)
				if err := bad.Err(); !errors.Is(err, tc.want) {
					t.Fatalf("queued call's Err = %v; want %v", err, tc.want)
				}
			}
			if err := good.Err(); !errors.Is(err, ErrBatchNotExecuted) && tc.c == c {
				t.Fatalf("before Execute: %v; want ErrBatchNotExecuted", err)
			}
			log.take()
			if err := b.Execute(tc.ctx); !errors.Is(err, tc.want) {
				t.Fatalf("Execute = %v; want %v", err, tc.want)
			}
			if sent := log.take(); len(sent) != 0 {
				t.Fatalf("sent %q; want nothing", sent)
			}
			if err := good.Err(); !errors.Is(err, tc.want) {
				t.Fatalf("the good call's Err = %v; want %v", err, tc.want)
			}
			if n := rdb.Exists(ctx, name).Val(); n != 0 {
				t.Fatalf("%s exists: Redis changed", name)
			}
		})
	}

	t.Run("twice", func(t *testing.T) {
		b := c.CreateBatch()
		f := GetBatchBucket[string](b, name).Get()
		if _, err := f.Result(); !errors.Is(err, ErrBatchNotExecuted) {
			t.Fatalf("Result before Execute = %v; want ErrBatchNotExecuted", err)
		}
		if err := b.Execute(ctx); err != nil {
			t.Fatal(err)
		}
		late := GetBatchBucket[string](b, name).Set("v")
		if err := late.Err(); !errors.Is(err, ErrBatchExecuted) {
			t.Fatalf("a call queued after Execute: %v; want ErrBatchExecuted", err)
		}
		log.take()
		if err := b.Execute(ctx); !errors.Is(err, ErrBatchExecuted) {
			t.Fatalf("Execute again = %v; want ErrBatchExecuted", err)
		}
		if sent := log.take(); len(sent) != 0 {
			t.Fatalf("sent %q; want nothing", sent)
		}
		if v, err := f.Result(); err != nil || f.Found() || v != "" {
			t.Fatalf("first Execute's result now %q, %v", v, err)
		}
	})

	t.Run("empty", func(t *testing.T) {
		log.take()
		if err := c.CreateBatch().Execute(ctx); err != nil {
			t.Fatal(err)
		}
		if sent := log.take(); len(sent) != 0 {
			t.Fatalf("sent %q; want nothing", sent)
		}
	})
}

// resendHook sends every pipeline twice, as go-redis does when a reply is
// lost and it retries: the second replies are the ones kept.
type resendHook struct{ on atomic.Bool }

func (h *resendHook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *resendHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *resendHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.on.Load() {
			if err := next(ctx, cmds); err != nil {
				return err
			}
		}
		return next(ctx, cmds)
	}
}

// The AtomicLong's call markers keep working in a batch: a resent batch
// adds once and reports its first results, and the markers are deleted
// once the batch has returned.
func TestBatchResentAddsOnce(t *testing.T) {
	rdb := sharedRedis(t)
	h := &resendHook{}
	rdb.AddHook(h)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), name) })
	for _, opts := range [][]BatchOption{nil, {BatchAtomic()}} {
		rdb.Del(ctx, name)
		b := c.CreateBatch(opts...)
		al := b.GetAtomicLong(name)
		fs := []*Future[int64]{al.IncrementAndGet(), al.AddAndGet(10), al.IncrementAndGet()}
		h.on.Store(true)
		err := b.Execute(ctx)
		h.on.Store(false)
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []int64{1, 11, 12} {
			if v, err := fs[i].Result(); err != nil || v != want {
				t.Fatalf("call %d = %d, %v; want %d", i, v, err, want)
			}
		}
		if v, err := c.GetAtomicLong(name).Get(ctx); err != nil || v != 12 {
			t.Fatalf("value %d, %v; want 12 (each addition once)", v, err)
		}
	}
	pattern := prefixName("redisson_al_call", name) + ":*"
	pattern = strings.NewReplacer("{", "\\{", "}", "\\}").Replace(pattern)
	deadline := time.Now().Add(20 * time.Second)
	for {
		keys, err := rdb.Keys(ctx, pattern).Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("call markers left: %q", keys)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Scripts flushed from the server between batches are loaded again, and
// every call runs.
func TestBatchScriptFlush(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), name, name+":m") })
	for i := int64(1); i <= 3; i++ {
		if err := rdb.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		b := c.CreateBatch()
		add := b.GetAtomicLong(name).AddAndGet(1)
		put := GetBatchMap[string, int64](b, name+":m").Put("k", i)
		if err := b.Execute(ctx); err != nil {
			t.Fatal(err)
		}
		eq(t, "AddAndGet", add, i, true)
		eq(t, "Put", put, i-1, i > 1)
	}
}

// The Observer sees one batch.execute per Execute, with its round trips.
func TestBatchObserved(t *testing.T) {
	c, rec, _ := observedClient(t, nil)
	ctx := testCtx(t, time.Minute)
	base := uniqueName(t, c.rdb)
	batchKeys(t, c.rdb, base)
	for i := 0; i < 2; i++ {
		b := c.CreateBatch()
		fillBatch(b, base+":"+string(rune('a'+i)))
		batchKeys(t, c.rdb, base+":"+string(rune('a'+i)))
		if err := b.Execute(ctx); err != nil {
			t.Fatal(err)
		}
	}
	ops := rec.opsOf(opBatchExecute, "")
	if len(ops) != 2 || ops[0].Kind != batchKind || ops[1].RoundTrips != 1 || ops[1].Err != nil {
		t.Fatalf("batch.execute records %+v; want 2, the second of one round trip", ops)
	}
	if err := c.CreateBatch().Execute(ctx); err != nil {
		t.Fatal(err)
	}
	b := c.CreateBatch()
	GetBatchBucket[string](b, "").Get()
	if err := b.Execute(ctx); !errors.Is(err, ErrEmptyName) {
		t.Fatal(err)
	}
	if ops := rec.opsOf(opBatchExecute, ""); len(ops) != 4 || !errors.Is(ops[3].Err, ErrEmptyName) {
		t.Fatalf("records %+v; want a 4th with ErrEmptyName", ops)
	}
}
