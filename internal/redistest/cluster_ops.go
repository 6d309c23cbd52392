package redistest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// nodeInfo is one line of CLUSTER NODES.
type nodeInfo struct {
	id, addr, flags, master string
	slots                   []string // "0-5460", "5461", "[5461->-id]" ...
}

func (n nodeInfo) isMaster() bool { return strings.Contains(n.flags, "master") }

// owns reports whether n serves slot (migration markers aside).
func (n nodeInfo) owns(slot int) bool {
	for _, r := range n.slots {
		if strings.HasPrefix(r, "[") {
			continue
		}
		lo, hi, ok := strings.Cut(r, "-")
		if !ok {
			hi = lo
		}
		a, err1 := strconv.Atoi(lo)
		b, err2 := strconv.Atoi(hi)
		if err1 == nil && err2 == nil && a <= slot && slot <= b {
			return true
		}
	}
	return false
}

// clusterNodes returns addr's view of the cluster, keyed by node address.
func clusterNodes(ctx context.Context, addr string) (map[string]nodeInfo, error) {
	v, err := do(ctx, addr, "CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	text, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("CLUSTER NODES on %s replied %T", addr, v)
	}
	nodes := map[string]nodeInfo{}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		a, _, _ := strings.Cut(f[1], "@")
		nodes[a] = nodeInfo{id: f[0], addr: a, flags: f[2], master: f[3], slots: f[8:]}
	}
	return nodes, nil
}

// view returns the CLUSTER NODES view of the first running node.
func (c *Cluster) view(ctx context.Context) (map[string]nodeInfo, error) {
	var lastErr error = errors.New("no running node")
	for _, s := range c.servers {
		if !s.Running() {
			continue
		}
		nodes, err := clusterNodes(ctx, s.Addr())
		if err == nil {
			return nodes, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// Masters returns the addresses of the nodes that are masters now, in the
// order of Addrs, as each running node reports its own ROLE (gossip may
// take a moment to tell the other nodes).
func (c *Cluster) Masters(tb testing.TB) []string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var masters []string
	for _, s := range c.servers {
		if !s.Running() {
			continue
		}
		v, err := s.Do(ctx, "ROLE")
		role, ok := v.([]any)
		if err != nil || !ok || len(role) == 0 {
			tb.Fatalf("redistest: ROLE on %s = %v, %v", s.Addr(), v, err)
		}
		if role[0] == "master" {
			masters = append(masters, s.Addr())
		}
	}
	return masters
}

// SlotOf returns the hash slot of key (CLUSTER KEYSLOT).
func (c *Cluster) SlotOf(tb testing.TB, key string) int {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	v, err := do(ctx, c.servers[0].Addr(), "CLUSTER", "KEYSLOT", key)
	n, ok := v.(int64)
	if err != nil || !ok {
		tb.Fatalf("redistest: CLUSTER KEYSLOT %q = %v, %v", key, v, err)
	}
	return int(n)
}

// SlotOwner returns the address of the master serving slot.
func (c *Cluster) SlotOwner(tb testing.TB, slot int) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	nodes, err := c.view(ctx)
	if err != nil {
		tb.Fatalf("redistest: CLUSTER NODES: %v", err)
	}
	for _, n := range nodes {
		if n.isMaster() && n.owns(slot) {
			return n.addr
		}
	}
	tb.Fatalf("redistest: no master serves slot %d", slot)
	return ""
}

// Failover makes a replica of the master at masterAddr take its place with
// CLUSTER FAILOVER sent to the replica: a coordinated, manual failover in
// which the master stops accepting writes until the replica has caught up,
// so no acknowledged write is lost. It waits (up to 30 s) until every
// node sees the replica as a master and the old master as its replica and
// the cluster is healthy (see WaitHealthy), and returns the new master's
// address.
func (c *Cluster) Failover(tb testing.TB, masterAddr string) string {
	tb.Helper()
	r, err := c.failover(masterAddr)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	return r
}

func (c *Cluster) failover(masterAddr string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*clusterTimeout)
	defer cancel()
	// The master's view of its replicas can lag (a replica just attached,
	// or flagged pfail for a moment on a loaded machine): wait for one.
	var replica string
	for wait := time.Now().Add(clusterTimeout); replica == ""; time.Sleep(50 * time.Millisecond) {
		nodes, err := clusterNodes(ctx, masterAddr)
		if err != nil {
			return "", err
		}
		m, ok := nodes[masterAddr]
		if !ok || !m.isMaster() {
			return "", fmt.Errorf("failover: %s is not a master", masterAddr)
		}
		for _, n := range nodes {
			if n.master == m.id && !strings.Contains(n.flags, "fail") {
				replica = n.addr
				break
			}
		}
		if replica == "" && time.Now().After(wait) {
			return "", fmt.Errorf("failover: master %s has no healthy replica after %v", masterAddr, clusterTimeout)
		}
	}
	if _, err := do(ctx, replica, "CLUSTER", "FAILOVER"); err != nil {
		return "", fmt.Errorf("CLUSTER FAILOVER on %s: %w", replica, err)
	}
	deadline := time.Now().Add(clusterTimeout)
	for {
		problem := c.failoverProblem(ctx, replica, masterAddr)
		if problem == "" {
			break
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("failover of %s to %s not done after %v: %s", masterAddr, replica, clusterTimeout, problem)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return replica, c.waitHealthy(clusterTimeout)
}

// failoverProblem reports a node that does not yet see newMaster as a
// master and oldMaster as a replica.
func (c *Cluster) failoverProblem(ctx context.Context, newMaster, oldMaster string) string {
	for _, s := range c.servers {
		if !s.Running() {
			continue
		}
		nodes, err := clusterNodes(ctx, s.Addr())
		if err != nil {
			return fmt.Sprintf("%s: %v", s.Addr(), err)
		}
		if !nodes[newMaster].isMaster() || nodes[oldMaster].isMaster() {
			return fmt.Sprintf("%s sees %s as %s and %s as %s", s.Addr(),
				newMaster, nodes[newMaster].flags, oldMaster, nodes[oldMaster].flags)
		}
	}
	return ""
}

// SlotMigration moves one hash slot between masters the way redis-cli
// --cluster reshard does, in steps a test can interleave with a workload:
// BeginSlotMigration marks the slot IMPORTING on the target and MIGRATING
// on the source (new keys of the slot are then created on the target,
// reached through ASK redirections), MoveKeys moves the existing keys with
// MIGRATE, and Finish assigns the slot to the target with CLUSTER SETSLOT
// NODE on every master. It is not safe for concurrent use.
type SlotMigration struct {
	c            *Cluster
	slot         int
	from, to     string
	fromID, toID string
	moved        int
}

// BeginSlotMigration starts moving slot from its current master to the
// master at to.
func (c *Cluster) BeginSlotMigration(tb testing.TB, slot int, to string) *SlotMigration {
	tb.Helper()
	m, err := c.beginSlotMigration(slot, to)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	return m
}

func (c *Cluster) beginSlotMigration(slot int, to string) (*SlotMigration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nodes, err := c.view(ctx)
	if err != nil {
		return nil, err
	}
	m := &SlotMigration{c: c, slot: slot, to: to}
	for _, n := range nodes {
		if n.isMaster() && n.owns(slot) {
			m.from, m.fromID = n.addr, n.id
		}
	}
	t, ok := nodes[to]
	if !ok || !t.isMaster() {
		return nil, fmt.Errorf("migrate slot %d: %s is not a master", slot, to)
	}
	m.toID = t.id
	if m.from == "" || m.from == to {
		return nil, fmt.Errorf("migrate slot %d: owned by %q, cannot move it to %s", slot, m.from, to)
	}
	s := strconv.Itoa(slot)
	if _, err := do(ctx, to, "CLUSTER", "SETSLOT", s, "IMPORTING", m.fromID); err != nil {
		return nil, fmt.Errorf("SETSLOT %s IMPORTING on %s: %w", s, to, err)
	}
	if _, err := do(ctx, m.from, "CLUSTER", "SETSLOT", s, "MIGRATING", m.toID); err != nil {
		return nil, fmt.Errorf("SETSLOT %s MIGRATING on %s: %w", s, m.from, err)
	}
	return m, nil
}

// From and To return the source and target masters.
func (m *SlotMigration) From() string { return m.from }

// To returns the target master of the migration.
func (m *SlotMigration) To() string { return m.to }

// MoveKeys moves every key of the slot still on the source to the target
// with MIGRATE (up to 100 keys per call) and returns how many it moved.
func (m *SlotMigration) MoveKeys(tb testing.TB) int {
	tb.Helper()
	n, err := m.moveKeys()
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	return n
}

func (m *SlotMigration) moveKeys() (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	host, port, _ := strings.Cut(m.to, ":")
	total := 0
	for {
		v, err := do(ctx, m.from, "CLUSTER", "GETKEYSINSLOT", strconv.Itoa(m.slot), "100")
		if err != nil {
			return total, fmt.Errorf("GETKEYSINSLOT %d on %s: %w", m.slot, m.from, err)
		}
		list, _ := v.([]any)
		if len(list) == 0 {
			m.moved += total
			return total, nil
		}
		args := []string{"MIGRATE", host, port, "", "0", "5000", "KEYS"}
		for _, k := range list {
			args = append(args, fmt.Sprint(k))
		}
		if _, err := do(ctx, m.from, args...); err != nil {
			return total, fmt.Errorf("MIGRATE %d keys of slot %d from %s to %s: %w", len(list), m.slot, m.from, m.to, err)
		}
		total += len(list)
	}
}

// Finish moves any keys left, assigns the slot to the target on the target,
// the source and the other masters (CLUSTER SETSLOT NODE), and waits until
// every node agrees and the cluster is healthy. It returns the number of
// keys moved by the whole migration.
func (m *SlotMigration) Finish(tb testing.TB) int {
	tb.Helper()
	if err := m.finish(); err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	return m.moved
}

func (m *SlotMigration) finish() error {
	if _, err := m.moveKeys(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*clusterTimeout)
	defer cancel()
	s := strconv.Itoa(m.slot)
	order := []string{m.to, m.from}
	nodes, err := m.c.view(ctx)
	if err != nil {
		return err
	}
	for a, n := range nodes {
		if n.isMaster() && a != m.to && a != m.from {
			order = append(order, a)
		}
	}
	for _, a := range order {
		if _, err := do(ctx, a, "CLUSTER", "SETSLOT", s, "NODE", m.toID); err != nil {
			return fmt.Errorf("SETSLOT %s NODE on %s: %w", s, a, err)
		}
	}
	deadline := time.Now().Add(clusterTimeout)
	for {
		problem := m.c.slotProblem(ctx, m.slot, m.to)
		if problem == "" {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("slot %d not owned by %s everywhere after %v: %s", m.slot, m.to, clusterTimeout, problem)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return m.c.waitHealthy(clusterTimeout)
}

// MigrateSlot moves slot and its keys to the master at to in one go
// (BeginSlotMigration, MoveKeys, Finish) and returns the number of keys
// moved.
func (c *Cluster) MigrateSlot(tb testing.TB, slot int, to string) int {
	tb.Helper()
	m := c.BeginSlotMigration(tb, slot, to)
	return m.Finish(tb)
}

// slotProblem reports a node that does not see owner as serving slot.
func (c *Cluster) slotProblem(ctx context.Context, slot int, owner string) string {
	for _, s := range c.servers {
		if !s.Running() {
			continue
		}
		nodes, err := clusterNodes(ctx, s.Addr())
		if err != nil {
			return fmt.Sprintf("%s: %v", s.Addr(), err)
		}
		if !nodes[owner].owns(slot) {
			return fmt.Sprintf("%s does not see %s serving slot %d", s.Addr(), owner, slot)
		}
	}
	return ""
}
