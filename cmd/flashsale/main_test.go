package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/redissontest"
	"go.uber.org/goleak"
)

func runSale(t *testing.T, cfg Config) *Result {
	t.Helper()
	mr, err := redissontest.StartEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	defer mr.Close()
	cfg.ProductID = t.Name()
	r, err := Run(context.Background(), cfg, clientFactory(mr.Addr(), cfg))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", *r)
	// Keys without a TTL would stay forever on a real server.
	for _, k := range mr.Keys() {
		if mr.TTL(k) <= 0 {
			t.Errorf("key left behind: %s", k)
		}
	}
	return r
}

func TestLockedSaleDoesNotOversell(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := runSale(t, Config{
		Stock: 50, Instances: 2, Buyers: 16,
		Work: time.Millisecond, LockWait: 5 * time.Second, Duration: time.Minute,
	})
	if r.Stopped != "" {
		t.Fatalf("sale stopped early: %s", r.Stopped)
	}
	if r.Oversold != 0 || r.Sold != 50 || r.Left != 0 {
		t.Errorf("sold %d left %d oversold %d, want 50 0 0", r.Sold, r.Left, r.Oversold)
	}
	if !r.OK() {
		t.Errorf("invariant broken: %+v", *r)
	}
	if r.Errors != 0 {
		t.Errorf("%d errors, first: %s", r.Errors, r.FirstError)
	}
}

// The naive lock's lease (20ms) is far shorter than its business step (60ms):
// every lease expires mid-purchase, the next of the 12 spinning buyers gets in
// within a few ms and reads the same stock, so nearly every unit is sold twice.
// Overselling by at least one over 20 units is practically certain.
func TestNaiveSaleOversells(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := runSale(t, Config{
		Stock: 20, Instances: 2, Buyers: 12, Naive: true,
		NaiveLease: 20 * time.Millisecond, NaiveWork: 60 * time.Millisecond,
		Duration: 30 * time.Second,
	})
	if r.Stopped != "" {
		t.Fatalf("sale stopped early: %s", r.Stopped)
	}
	if r.Sold <= 20 || r.Oversold == 0 || r.OK() {
		t.Errorf("naive lock did not oversell: sold %d left %d oversold %d", r.Sold, r.Left, r.Oversold)
	}
}

// Off a terminal (Live false) the progress bar is one line at the end, with
// no carriage returns: a log file does not get a frame per 100ms.
func TestProgressOffTerminalIsOneLine(t *testing.T) {
	var buf bytes.Buffer
	runSale(t, Config{
		Stock: 20, Instances: 2, Buyers: 4,
		Work: 20 * time.Millisecond, LockWait: 5 * time.Second, Duration: time.Minute,
		Progress: &buf,
	})
	out := buf.String()
	if strings.Contains(out, "\r") || strings.Count(out, "\n") != 1 || !strings.Contains(out, "20/20 sold") {
		t.Errorf("progress off a terminal = %q; want one line saying 20/20 sold, without \\r", out)
	}
	if f, err := os.CreateTemp(t.TempDir(), "log"); err == nil {
		defer f.Close()
		if isTerminal(f) {
			t.Error("isTerminal(a regular file) = true")
		}
	}
}
