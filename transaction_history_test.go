package redisson

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/history"
	"github.com/redis/go-redis/v9"
)

// account is a balance with the version of its latest committed write.
type account struct {
	Balance int64 `json:"b"`
	Version int64 `json:"v"`
}

// TestTransactionTransfersLoseNoUpdate is the proof of issue 28: 64
// goroutines on 3 clients move money between accounts (a map's entries),
// each transfer a transaction that reads both accounts with GetForUpdate
// (in name order) and puts both back. The total never changes, and the
// history checker finds every account's committed writes in one chain of
// versions ending at its final state: no lost update.
func TestTransactionTransfersLoseNoUpdate(t *testing.T) {
	topologies(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testCtx(t, 3*time.Minute)
		mn := "{" + uniqueName(t, rdb) + "}:accounts"
		t.Cleanup(func() { rdb.Del(context.Background(), mn) })
		const accounts, start = 8, 1000
		clients := []*Client{newClient(t, rdb, nil), newClient(t, rdb, nil), newClient(t, rdb, nil)}
		initial := map[string]history.Record{}
		seed := GetMap[string, account](clients[0], mn)
		for i := range accounts {
			k := fmt.Sprintf("acct%02d", i)
			if _, err := seed.FastPut(ctx, k, account{Balance: start}); err != nil {
				t.Fatal(err)
			}
			initial[k] = history.Record{Value: start}
		}
		var mu sync.Mutex
		var writes []history.VersionWrite
		var committed, refused int
		var wg sync.WaitGroup
		deadline := time.Now().Add(3 * time.Second)
		for g := range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := clients[g%len(clients)]
				r := rand.New(rand.NewPCG(uint64(g), 28))
				for time.Now().Before(deadline) {
					a, b := r.IntN(accounts), r.IntN(accounts-1)
					if b >= a {
						b++
					}
					if a > b {
						a, b = b, a // take the locks in name order
					}
					ws, err := transfer(ctx, c, mn, fmt.Sprintf("acct%02d", a), fmt.Sprintf("acct%02d", b), int64(r.IntN(50)-25))
					mu.Lock()
					switch {
					case err == nil:
						committed++
						writes = append(writes, ws...)
					case errors.Is(err, ErrTransactionTimeout):
						refused++
					default:
						t.Errorf("transfer: %v", err)
					}
					mu.Unlock()
					if err != nil && !errors.Is(err, ErrTransactionTimeout) {
						return
					}
				}
			}()
		}
		wg.Wait()
		all, err := seed.ReadAll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		final := map[string]history.Record{}
		var total int64
		for k, v := range all {
			final[k] = history.Record{Version: v.Version, Value: v.Balance}
			total += v.Balance
		}
		if total != accounts*start {
			t.Errorf("total %d, want %d", total, accounts*start)
		}
		for _, bad := range history.LostUpdates(writes, initial, final) {
			t.Error(bad)
		}
		if committed < 64 {
			t.Errorf("%d transfers committed, want at least one per goroutine", committed)
		}
		t.Logf("%d transfers committed, %d timed out", committed, refused)
	})
}

// transfer moves amount from account a to b in one transaction and returns
// the two writes it committed.
func transfer(ctx context.Context, c *Client, mn, a, b string, amount int64) ([]history.VersionWrite, error) {
	tx, err := c.CreateTransaction(TransactionOptions{Timeout: 5 * time.Second})
	if err != nil {
		return nil, err
	}
	m := GetTxMap[string, account](tx, mn)
	ws := make([]history.VersionWrite, 0, 2)
	for _, step := range []struct {
		key   string
		delta int64
	}{{a, -amount}, {b, amount}} {
		v, _, err := m.GetForUpdate(ctx, step.key)
		if err != nil {
			_ = tx.Rollback(ctx)
			return nil, err
		}
		next := account{Balance: v.Balance + step.delta, Version: v.Version + 1}
		if _, err := m.FastPut(ctx, step.key, next); err != nil {
			_ = tx.Rollback(ctx)
			return nil, err
		}
		ws = append(ws, history.VersionWrite{Key: step.key, From: v.Version, To: next.Version, Value: next.Balance})
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, err
	}
	return ws, nil
}

// TestTxMapCacheTransfersLoseNoUpdate is the transfer proof on a MapCache:
// 16 goroutines on 2 clients move money between entries that each carry a
// TTL (so every commit also rewrites the timeout zset), through
// GetForUpdate and PutWithTTL. The total never changes, and the history
// checker finds every entry's committed writes in one chain of versions
// ending at the state a plain MapCache reads.
func TestTxMapCacheTransfersLoseNoUpdate(t *testing.T) {
	topologies(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testCtx(t, 3*time.Minute)
		mn := uniqueName(t, rdb) + ":accounts"
		t.Cleanup(func() {
			for _, k := range mapCacheKeys(mn) {
				rdb.Del(context.Background(), k)
			}
		})
		const accounts, start, goroutines = 6, 1000, 16
		clients := []*Client{newClient(t, rdb, nil), newClient(t, rdb, nil)}
		initial := map[string]history.Record{}
		seed := GetMapCache[string, account](clients[0], mn)
		for i := range accounts {
			k := fmt.Sprintf("acct%02d", i)
			if _, err := seed.FastPutWithTTL(ctx, k, account{Balance: start}, time.Hour, 0); err != nil {
				t.Fatal(err)
			}
			initial[k] = history.Record{Value: start}
		}
		var mu sync.Mutex
		var writes []history.VersionWrite
		var committed, refused int
		var wg sync.WaitGroup
		deadline := time.Now().Add(1500 * time.Millisecond)
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := clients[g%len(clients)]
				r := rand.New(rand.NewPCG(uint64(g), 28))
				for time.Now().Before(deadline) {
					a, b := r.IntN(accounts), r.IntN(accounts-1)
					if b >= a {
						b++
					}
					if a > b {
						a, b = b, a // take the locks in name order
					}
					ws, err := transferMapCache(ctx, c, mn, fmt.Sprintf("acct%02d", a), fmt.Sprintf("acct%02d", b), int64(r.IntN(50)-25))
					mu.Lock()
					switch {
					case err == nil:
						committed++
						writes = append(writes, ws...)
					case errors.Is(err, ErrTransactionTimeout):
						refused++
					default:
						t.Errorf("transfer: %v", err)
					}
					mu.Unlock()
					if err != nil && !errors.Is(err, ErrTransactionTimeout) {
						return
					}
				}
			}()
		}
		wg.Wait()
		all, err := seed.ReadAll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != accounts {
			t.Errorf("%d live entries, want %d", len(all), accounts)
		}
		final := map[string]history.Record{}
		var total int64
		for k, v := range all {
			final[k] = history.Record{Version: v.Version, Value: v.Balance}
			total += v.Balance
		}
		if total != accounts*start {
			t.Errorf("total %d, want %d", total, accounts*start)
		}
		for _, bad := range history.LostUpdates(writes, initial, final) {
			t.Error(bad)
		}
		if n := rdb.ZCard(ctx, mapCacheKeys(mn)[mcTimeout]).Val(); n != accounts {
			t.Errorf("timeout zset has %d members, want %d", n, accounts)
		}
		if committed < goroutines {
			t.Errorf("%d transfers committed, want at least one per goroutine", committed)
		}
		t.Logf("%d transfers committed, %d timed out", committed, refused)
	})
}

// transferMapCache is transfer on a MapCache, each entry put back with a
// TTL.
func transferMapCache(ctx context.Context, c *Client, mn, a, b string, amount int64) ([]history.VersionWrite, error) {
	tx, err := c.CreateTransaction(TransactionOptions{Timeout: 5 * time.Second})
	if err != nil {
		return nil, err
	}
	m := GetTxMapCache[string, account](tx, mn)
	ws := make([]history.VersionWrite, 0, 2)
	for _, step := range []struct {
		key   string
		delta int64
	}{{a, -amount}, {b, amount}} {
		v, _, err := m.GetForUpdate(ctx, step.key)
		if err != nil {
			_ = tx.Rollback(ctx)
			return nil, err
		}
		next := account{Balance: v.Balance + step.delta, Version: v.Version + 1}
		if _, _, err := m.PutWithTTL(ctx, step.key, next, time.Hour, 0); err != nil {
			_ = tx.Rollback(ctx)
			return nil, err
		}
		ws = append(ws, history.VersionWrite{Key: step.key, From: v.Version, To: next.Version, Value: next.Balance})
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, err
	}
	return ws, nil
}
