package redistest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// The sentinel deployment starts ready, its failover client writes to the
// master, SENTINEL FAILOVER promotes the replica (reported by every
// sentinel, writable), the client follows it, and the old master rejoins as
// a replica so that a second failover works too. With min-replicas-to-write
// 1, a master without its replica refuses writes.
func TestSentinel(t *testing.T) {
	s := StartSentinel(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if got := len(s.SentinelAddrs()); got != 3 {
		t.Fatalf("got %d sentinels, want 3", got)
	}
	c := s.Client(t)
	if err := c.Set(ctx, "k", "v1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	first, err := s.MasterAddr(ctx)
	if err != nil || first != s.Servers()[0].Addr() {
		t.Fatalf("MasterAddr = %q, %v; want %s", first, err, s.Servers()[0].Addr())
	}

	r := s.Failover(t)
	t.Logf("failover 1: %+v", r)
	if r.OldMaster != first || r.NewMaster != s.Servers()[1].Addr() {
		t.Fatalf("failover %s -> %s; want %s -> %s", r.OldMaster, r.NewMaster, first, s.Servers()[1].Addr())
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := c.Set(ctx, "k", "v2", 0).Err()
		if err == nil && c.Get(ctx, "k").Val() == "v2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("client does not write to the new master: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if v, err := s.Servers()[1].Do(ctx, "GET", "k"); err != nil || v != "v2" {
		t.Fatalf("GET k on the new master = %v, %v; want v2", v, err)
	}

	s.WaitReady(t, 30*time.Second) // the old master rejoined as a replica
	r = s.Failover(t)
	t.Logf("failover 2: %+v", r)
	if r.NewMaster != first {
		t.Fatalf("second failover promoted %s; want %s", r.NewMaster, first)
	}

	s.WaitReady(t, 30*time.Second)
	s.SetMinReplicas(t, 1, time.Second)
	master := s.Servers()[0]
	replica := s.Servers()[1]
	if _, err := master.Do(ctx, "SET", "k", "v3"); err != nil {
		t.Fatalf("SET with the replica linked: %v", err)
	}
	replica.Stop()
	deadline = time.Now().Add(30 * time.Second)
	for {
		_, err := master.Do(ctx, "SET", "k", "v4")
		var re RedisError
		if errors.As(err, &re) && strings.HasPrefix(string(re), "NOREPLICAS") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("SET without replica = %v; want NOREPLICAS", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
