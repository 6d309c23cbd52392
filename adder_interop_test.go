package redisson

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// javaAdder is a stand-in for one Redisson RLongAdder/RDoubleAdder instance,
// built from the RLongAdder and RDoubleAdder recordings: it SUBSCRIBEs to
// {name}:adder-topic and answers "1:<id>" with INCRBY (INCRBYFLOAT) of its
// part into {name}:<id>:counter, then releases the semaphore
// {name}:<id>:semaphore as RSemaphore.release does (INCRBY 1 and PUBLISH of
// the new count on redisson_sc:{name}:<id>:semaphore); "0:<id>" zeroes its
// part and releases. As a caller it PUBLISHes the request, waits until the
// semaphore counts the receivers, reads and deletes the counter, then
// deletes the semaphore.
type javaAdder struct {
	rdb    *redis.Client
	name   string
	double bool
	mu     sync.Mutex
	part   float64
	sub    *redis.PubSub
	done   chan struct{}
}

// javaRelease is RSemaphore.release's effect: incrby, then publish the new
// count (the command name is an argument, as in Redisson's script).
var javaRelease = redis.NewScript(`local value = redis.call('incrby', KEYS[1], ARGV[1]); redis.call(ARGV[2], KEYS[2], value);`)

func newJavaAdder(t *testing.T, rdb *redis.Client, name string, double bool) *javaAdder {
	t.Helper()
	j := &javaAdder{rdb: rdb, name: name, double: double, done: make(chan struct{})}
	ctx := context.Background()
	j.sub = rdb.Subscribe(ctx, "{"+name+"}:adder-topic")
	if _, err := j.sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	go j.loop()
	t.Cleanup(j.destroy)
	return j
}

func (j *javaAdder) add(x float64) {
	j.mu.Lock()
	j.part += x
	j.mu.Unlock()
}

func (j *javaAdder) loop() {
	defer close(j.done)
	ctx := context.Background()
	for msg := range j.sub.Channel() {
		cmd, id, _ := strings.Cut(msg.Payload, ":")
		p := "{" + j.name + "}:" + id
		j.mu.Lock()
		part := j.part
		if cmd == "0" {
			j.part = 0
		}
		j.mu.Unlock()
		if cmd == "1" {
			if j.double {
				j.rdb.IncrByFloat(ctx, p+":counter", part)
			} else {
				j.rdb.IncrBy(ctx, p+":counter", int64(part))
			}
		}
		javaRelease.Run(ctx, j.rdb, []string{p + ":semaphore", "redisson_sc:" + p + ":semaphore"}, 1, "PUBLISH")
	}
}

// sum is Redisson's sum() (cmd "1") or reset() (cmd "0").
func (j *javaAdder) call(t *testing.T, ctx context.Context, cmd string) string {
	t.Helper()
	var raw [16]byte
	rand.Read(raw[:])
	p := "{" + j.name + "}:" + hex.EncodeToString(raw[:])
	n, err := j.rdb.Publish(ctx, "{"+j.name+"}:adder-topic", cmd+":"+hex.EncodeToString(raw[:])).Result()
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "every receiver answered", func() bool {
		got, _ := j.rdb.Get(ctx, p+":semaphore").Int64()
		return got >= n
	})
	v := j.rdb.GetDel(ctx, p+":counter").Val()
	j.rdb.Del(ctx, p+":semaphore")
	return v
}

func (j *javaAdder) destroy() {
	j.sub.Close()
	<-j.done
}

// TestLongAdderRedissonInterop replays the RLongAdder recording with a Go
// instance in place of client B: A (the stand-in) adds 5 and 1, B adds 3;
// both sums see 9; B's Reset zeroes A's part; nothing is left in Redis.
func TestLongAdderRedissonInterop(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	java := newJavaAdder(t, rdb, name, false)
	b := c.GetLongAdder(name)
	t.Cleanup(func() { b.Close() })
	java.add(5)
	b.Add(3)
	java.add(1)
	if got, err := b.Sum(ctx); err != nil || got != 9 {
		t.Fatalf("Go Sum = %d, %v; want 9", got, err)
	}
	if got := java.call(t, ctx, "1"); got != "9" {
		t.Fatalf("Redisson's sum read counter %q; want 9", got)
	}
	if err := b.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if got := java.call(t, ctx, "1"); got != "0" {
		t.Fatalf("Redisson's sum after Go's Reset read %q; want 0", got)
	}
	b.Add(4)
	java.call(t, ctx, "0") // Redisson's reset zeroes Go's part
	if got, err := b.Sum(ctx); err != nil || got != 0 {
		t.Fatalf("Go Sum after Redisson's reset = %d, %v; want 0", got, err)
	}
	if keys := rdb.Keys(ctx, "{"+name+"}*").Val(); len(keys) != 0 {
		t.Fatalf("keys left: %v; Redisson leaves none", keys)
	}
}

// TestDoubleAdderRedissonInterop replays the RDoubleAdder recording: A (the
// stand-in) adds 1.5 and 1, B (Go) 0.25; sums are 2.75 both ways.
func TestDoubleAdderRedissonInterop(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	java := newJavaAdder(t, rdb, name, true)
	b := c.GetDoubleAdder(name)
	t.Cleanup(func() { b.Close() })
	java.add(1.5)
	b.Add(0.25)
	java.add(1)
	if got, err := b.Sum(ctx); err != nil || got != 2.75 {
		t.Fatalf("Go Sum = %v, %v; want 2.75", got, err)
	}
	if got := java.call(t, ctx, "1"); got != "2.75" {
		t.Fatalf("Redisson's sum read counter %q; want 2.75", got)
	}
	if err := b.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	b.Add(0.1)
	if got := java.call(t, ctx, "1"); got != "0.1" {
		t.Fatalf("Redisson's sum after Go's Reset and Add(0.1) read %q; want 0.1", got)
	}
}

// TestAdderContribution checks the text a Go instance adds to a request's
// counter: INCRBY of the decimal int, INCRBYFLOAT of the decimal text
// Redisson writes ("0.0" for nothing, as recorded).
func TestAdderContribution(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	var mu sync.Mutex
	var sent []string
	rdb.AddHook(argsHook(func(args []any) {
		if len(args) > 1 && strings.HasPrefix(strings.ToLower(args[0].(string)), "evalsha") {
			mu.Lock()
			sent = append(sent, fmt.Sprintln(args[3:]...))
			mu.Unlock()
		}
	}))
	d := c.GetDoubleAdder(name)
	t.Cleanup(func() { d.Close() })
	if got, err := d.Sum(ctx); err != nil || got != 0 {
		t.Fatalf("Sum of nothing = %v, %v", got, err)
	}
	mu.Lock()
	defer mu.Unlock()
	found := false
	for _, s := range sent {
		if strings.Contains(s, " incrbyfloat 0.0 ") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no answer added \"0.0\" with incrbyfloat: %v", sent)
	}
}

// argsHook calls f with every command's arguments.
type argsHook func(args []any)

func (h argsHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h argsHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h(cmd.Args())
		return next(ctx, cmd)
	}
}
func (h argsHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			h(c.Args())
		}
		return next(ctx, cmds)
	}
}
