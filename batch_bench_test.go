package redisson

// BenchmarkBatch10000: a Batch of 10,000 calls against a raw go-redis
// pipeline of the same command lines (the same EVALSHAs, call markers
// included, and the same plain commands, with the values encoded once
// beforehand), each on its own redis-server:
//
//	go test -run '^$' -bench Batch10000 -benchmem -count 5 .

import (
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
)

const benchBatchCalls = 10000

// benchBatchKey names the key of call i: 100 keys of each kind.
func benchBatchKey(kind string, i int) string { return kind + ":" + strconv.Itoa(i%100) }

func BenchmarkBatch10000(b *testing.B) {
	b.Run("redisson", func(b *testing.B) {
		_, rdb, h, _ := benchRedis(b)
		ctx := benchCtx(b)
		c, err := New(rdb, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		run := func() error {
			// A handle per object per batch, as an application makes them:
			// 300 objects, 10,000 calls.
			batch := c.CreateBatch()
			buckets := make([]*BatchBucket[string], 100)
			maps := make([]*BatchMap[string, int64], 100)
			longs := make([]*BatchAtomicLong, 100)
			for i := range 100 {
				buckets[i] = GetBatchBucket[string](batch, benchBatchKey("b", i))
				maps[i] = GetBatchMap[string, int64](batch, benchBatchKey("m", i))
				longs[i] = batch.GetAtomicLong(benchBatchKey("al", i))
			}
			for i := 0; i < benchBatchCalls; i++ {
				switch i % 4 {
				case 0:
					buckets[i%100].Set("value")
				case 1:
					buckets[i%100].Get()
				case 2:
					maps[i%100].FastPut("k", int64(i))
				case 3:
					longs[i%100].AddAndGet(1)
				}
			}
			return batch.Execute(ctx)
		}
		if err := run(); err != nil { // dial and load the scripts outside the loop
			b.Fatal(err)
		}
		benchBatchLoop(b, h, run)
	})

	b.Run("go-redis", func(b *testing.B) {
		_, rdb, h, _ := benchRedis(b)
		ctx := benchCtx(b)
		for _, s := range []*script{scriptBucketSet, scriptAtomicAdd} {
			if err := rdb.ScriptLoad(ctx, s.Source()).Err(); err != nil {
				b.Fatal(err)
			}
		}
		value, _ := (MsgpackCodec{}).Marshal("value")
		field, _ := (MsgpackCodec{}).Marshal("k")
		nums := make([][]byte, benchBatchCalls)
		for i := range nums {
			nums[i], _ = (MsgpackCodec{}).Marshal(int64(i))
		}
		var seq int
		run := func() error {
			pipe := rdb.Pipeline()
			for i := 0; i < benchBatchCalls; i++ {
				switch i % 4 {
				case 0:
					pipe.EvalSha(ctx, scriptBucketSet.SHA(), []string{benchBatchKey("b", i)}, value, "0", "set")
				case 1:
					pipe.Get(ctx, benchBatchKey("b", i))
				case 2:
					pipe.HSet(ctx, benchBatchKey("m", i), field, nums[i])
				case 3:
					seq++
					k := benchBatchKey("al", i)
					marker := prefixName("redisson_al_call", k) + ":00000000-0000-0000-0000-000000000000:" + strconv.Itoa(seq)
					pipe.EvalSha(ctx, scriptAtomicAdd.SHA(), []string{k, marker}, int64(1), "1000")
				}
			}
			_, err := pipe.Exec(ctx)
			if err == redis.Nil {
				err = nil
			}
			return err
		}
		if err := run(); err != nil {
			b.Fatal(err)
		}
		benchBatchLoop(b, h, run)
	})
}

// benchBatchLoop times run, reporting round trips and this process's CPU
// time (the client's share, less disturbed than wall time by other work on
// the machine) per batch.
func benchBatchLoop(b *testing.B, h *benchRTHook, run func() error) {
	b.ReportAllocs()
	rt0, cpu0 := h.roundTrips(), benchProcessCPU()
	for b.Loop() {
		if err := run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(h.roundTrips()-rt0)/float64(b.N), "roundtrips/op")
	b.ReportMetric(float64(benchProcessCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}
