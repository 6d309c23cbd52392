package redisson

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
)

// Begin runs, replays and refuses; a resent begin (same token) runs again
// for its caller only; Abandon frees the key; Renew and Complete need the
// running token.
func TestIdempotencyRecordStates(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	r := c.GetIdempotencyRecord(name)
	ctx := context.Background()
	res, err := r.Begin(ctx, "fp", time.Minute, 0)
	if err != nil || res.State != IdempotencyRun || res.Token == "" {
		t.Fatalf("first Begin: %+v, %v", res, err)
	}
	// The same script call resent after a lost reply: its own token runs.
	n, err := c.scripts.run(ctx, scriptIdemBegin, []string{name}, "fp", res.Token, 60000).Slice()
	if err != nil || len(n) != 1 || n[0] != int64(1) {
		t.Errorf("resent begin: %v, %v; want [1]", n, err)
	}
	busy, err := r.Begin(ctx, "fp", time.Minute, 0)
	if err != nil || busy.State != IdempotencyBusy {
		t.Errorf("second Begin while running: %+v, %v; want Busy", busy, err)
	}
	if ok, err := r.Renew(ctx, "other", time.Minute); ok || err != nil {
		t.Errorf("Renew of another token: %v, %v; want false", ok, err)
	}
	if ok, err := r.Renew(ctx, res.Token, 2*time.Minute); !ok || err != nil {
		t.Errorf("Renew: %v, %v; want true", ok, err)
	}
	if ok, err := r.Abandon(ctx, res.Token); !ok || err != nil {
		t.Errorf("Abandon: %v, %v; want true", ok, err)
	}
	if n := rdb.Exists(ctx, name).Val(); n != 0 {
		t.Errorf("record exists after Abandon")
	}
	res, _ = r.Begin(ctx, "fp", time.Minute, 0)
	if ok, err := r.Complete(ctx, res.Token, 200, []byte("h"), []byte("b\x00\xff"), time.Minute); !ok || err != nil {
		t.Fatalf("Complete: %v, %v", ok, err)
	}
	if ok, err := r.Complete(ctx, res.Token, 200, []byte("h"), []byte("b\x00\xff"), time.Minute); !ok || err != nil {
		t.Errorf("Complete resent: %v, %v; want true", ok, err)
	}
	if ok, _ := r.Renew(ctx, res.Token, time.Minute); ok {
		t.Errorf("Renew after Complete reported true")
	}
	got, err := r.Begin(ctx, "fp", time.Minute, 0)
	if err != nil || got.State != IdempotencyReplay || got.Status != 200 || string(got.Header) != "h" || string(got.Body) != "b\x00\xff" {
		t.Errorf("replay: %+v, %v", got, err)
	}
	if got, _ := r.Begin(ctx, "fp2", time.Minute, 0); got.State != IdempotencyMismatch {
		t.Errorf("other fingerprint: %+v, want Mismatch", got)
	}
}

// A waiter is woken by Complete's message and gets the replay; a waiter
// whose ctx ends returns ctx's error and leaves the record as it was.
func TestIdempotencyRecordWait(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	c := newClient(t, rdb, nil)
	r := c.GetIdempotencyRecord(uniqueName(t, rdb))
	ctx := context.Background()
	res, _ := r.Begin(ctx, "fp", time.Minute, 0)
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := r.Begin(cctx, "fp", time.Minute, -1); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled waiter: %v, want DeadlineExceeded", err)
	}
	done := make(chan IdempotencyResult, 1)
	go func() {
		got, err := r.Begin(ctx, "fp", time.Minute, time.Minute)
		if err != nil {
			t.Error(err)
		}
		done <- got
	}()
	time.Sleep(50 * time.Millisecond)
	if ok, err := r.Complete(ctx, res.Token, 201, nil, []byte("x"), time.Minute); !ok || err != nil {
		t.Fatalf("Complete: %v, %v", ok, err)
	}
	select {
	case got := <-done:
		if got.State != IdempotencyReplay || string(got.Body) != "x" {
			t.Errorf("waiter: %+v", got)
		}
	case <-time.After(20 * time.Second): // the lease is a minute: only the message wakes it this soon
		t.Fatal("waiter not woken by Complete")
	}
}

// Bad arguments are ErrInvalidIdempotency and send nothing.
func TestIdempotencyRecordInvalid(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	r := c.GetIdempotencyRecord(name)
	ctx := context.Background()
	for what, err := range map[string]error{
		"lease":     func() error { _, err := r.Begin(ctx, "fp", 0, 0); return err }(),
		"renew":     func() error { _, err := r.Renew(ctx, "", time.Second); return err }(),
		"status":    func() error { _, err := r.Complete(ctx, "t", 42, nil, nil, time.Second); return err }(),
		"retention": func() error { _, err := r.Complete(ctx, "t", 200, nil, nil, 0); return err }(),
		"abandon":   func() error { _, err := r.Abandon(ctx, ""); return err }(),
	} {
		if !errors.Is(err, ErrInvalidIdempotency) {
			t.Errorf("%s: %v, want ErrInvalidIdempotency", what, err)
		}
	}
	if n := rdb.Exists(ctx, name).Val(); n != 0 {
		t.Errorf("record written by refused calls")
	}
	if _, err := c.GetIdempotencyRecord("").Begin(ctx, "fp", time.Second, 0); !errors.Is(err, ErrEmptyName) {
		t.Errorf("empty name: %v", err)
	}
}
