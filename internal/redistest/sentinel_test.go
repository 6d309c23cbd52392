package redistest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The sentinel deployment starts ready, its failover client writes to the
// master, SENTINEL FAILOVER promotes the replica (reported by every
// sentinel, writable) and the client follows it. With min-replicas-to-write
// 1 the new master refuses writes until the old master has rejoined as its
// replica, after which the deployment is ready again.
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

	// min-replicas-to-write 1: the new master refuses writes while it has
	// no replica, and accepts them once the sentinels have turned the old
	// master into its replica.
	s.SetMinReplicas(t, 1, time.Second)
	newMaster := s.Servers()[1]
	_, err = newMaster.Do(ctx, "SET", "k", "v3")
	var re RedisError
	if !errors.As(err, &re) || !strings.HasPrefix(string(re), "NOREPLICAS") {
		t.Fatalf("SET on a master without replica = %v; want NOREPLICAS", err)
	}
	s.WaitReady(t, 45*time.Second) // the old master rejoined as a replica
	if _, err := newMaster.Do(ctx, "SET", "k", "v4"); err != nil {
		t.Fatalf("SET with the replica linked: %v", err)
	}
	v, err := s.Servers()[0].Do(ctx, "ROLE")
	if role, ok := v.([]any); err != nil || !ok || len(role) == 0 || fmt.Sprint(role[0]) != "slave" {
		t.Fatalf("ROLE of the old master = %v, %v; want slave", v, err)
	}
}
