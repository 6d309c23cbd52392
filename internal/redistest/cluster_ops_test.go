package redistest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// A 3+3 cluster started with a short node timeout: CLUSTER FAILOVER turns a
// replica into the master of its slots without losing keys, and a slot
// migration moves the keys of a slot to another master, where a cluster
// client then reads them.
func TestClusterOps(t *testing.T) {
	c := StartClusterWith(t, 3, 1, []string{"--cluster-node-timeout", "1000", "--repl-ping-replica-period", "1"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rdb := c.Client(t)
	masters := c.Masters(t)
	if len(masters) != 3 {
		t.Fatalf("got masters %v, want 3", masters)
	}

	slot := c.SlotOf(t, "{ops}")
	owner := c.SlotOwner(t, slot)
	for i := 0; i < 20; i++ {
		if err := rdb.Set(ctx, fmt.Sprintf("{ops}:%d", i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := do(ctx, owner, "WAIT", "1", "5000"); err != nil {
		t.Fatal(err)
	}

	promoted := c.Failover(t, owner)
	if got := c.SlotOwner(t, slot); got != promoted {
		t.Fatalf("slot %d served by %s after failover; want %s", slot, got, promoted)
	}
	if now := c.Masters(t); slices.Contains(now, owner) || !slices.Contains(now, promoted) {
		t.Fatalf("masters after failover %v; want %s in, %s out", now, promoted, owner)
	}
	if got := rdb.Get(ctx, "{ops}:7").Val(); got != "7" {
		t.Fatalf("GET after failover = %q, want 7", got)
	}

	var to string
	for _, m := range c.Masters(t) {
		if m != promoted {
			to = m
			break
		}
	}
	m := c.BeginSlotMigration(t, slot, to)
	if m.From() != promoted || m.To() != to {
		t.Fatalf("migration %s -> %s; want %s -> %s", m.From(), m.To(), promoted, to)
	}
	if n := m.MoveKeys(t); n != 20 {
		t.Fatalf("moved %d keys, want 20", n)
	}
	if n := m.Finish(t); n != 20 {
		t.Fatalf("migration moved %d keys, want 20", n)
	}
	if got := c.SlotOwner(t, slot); got != to {
		t.Fatalf("slot %d served by %s after migration; want %s", slot, got, to)
	}
	for i := 0; i < 20; i++ {
		if got := rdb.Get(ctx, fmt.Sprintf("{ops}:%d", i)).Val(); got != fmt.Sprint(i) {
			t.Fatalf("GET {ops}:%d after migration = %q", i, got)
		}
	}
	if n := c.MigrateSlot(t, slot, promoted); n != 20 {
		t.Fatalf("migrating back moved %d keys, want 20", n)
	}
}
