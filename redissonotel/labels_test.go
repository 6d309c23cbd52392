package redissonotel_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redissonotel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// Every label value of every data point is a bare word: the kinds whose
// names have spaces ("blocking queue", "fair lock", ...) are snake_case,
// on metrics and on spans alike, while errors keep the words.
func TestMetricLabelValuesHaveNoSpaces(t *testing.T) {
	tm := newTelemetry(t)
	c := newClient(t, tm.obs, nil, nil)
	defer tm.obs.RegisterClient(c, redissonotel.WithClientName("Order Service"))()
	ctx := context.Background()
	name := uniqueName(t)

	bq := redisson.GetBlockingQueue[string](c, name+":bq")
	if err := bq.Offer(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := bq.Poll(ctx, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	bounded := redisson.GetBoundedBlockingQueue[string](c, name+":bounded")
	if _, err := bounded.TrySetCapacity(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := bounded.Offer(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	fair := c.GetFairLock(name + ":fair")
	if ok, err := fair.TryLock(ctx, 0, time.Minute); err != nil || !ok {
		t.Fatalf("fair TryLock = %v, %v", ok, err)
	}
	if err := fair.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	rl := c.GetRateLimiter(name + ":rl")
	if _, err := rl.TrySetRate(ctx, redisson.Overall, 1, time.Minute); err != nil {
		t.Fatal(err)
	}
	for range 2 { // one allowed, one denied
		if _, err := rl.TryAcquire(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := redisson.GetSortedSet[string](c, name+":zset").Add(ctx, 1, "a"); err != nil {
		t.Fatal(err)
	}
	mc := redisson.GetMapCache[string, int](c, name+":mc")
	if _, _, err := mc.Put(ctx, "k", 1); err != nil {
		t.Fatal(err)
	}
	// A kind in an event, as the services report them.
	tm.obs.Event(ctx, &redisson.Event{Type: redisson.EventQueueUnconfirmed, Kind: "bounded blocking queue"})

	rm := tm.collect(t)
	seen := map[string]bool{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			for _, set := range attrSets(m) {
				for _, kv := range set.ToSlice() {
					v := kv.Value.Emit()
					seen[string(kv.Key)+"="+v] = true
					if strings.ContainsAny(v, " \t") || v != strings.ToLower(v) {
						t.Errorf("metric %s: label %s=%q is not a bare lower-case word", m.Name, kv.Key, v)
					}
				}
			}
		}
	}
	for _, want := range []string{"blocking_queue", "bounded_blocking_queue", "fair_lock", "rate_limiter",
		"sorted_set", "map_cache"} {
		if !seen[string(redissonotel.AttrKind)+"="+want] {
			t.Errorf("no data point with %s=%s; saw %v", redissonotel.AttrKind, want, seen)
		}
	}
	if !seen[string(redissonotel.AttrClient)+"=order_service"] {
		t.Errorf("no gauge with %s=order_service; saw %v", redissonotel.AttrClient, seen)
	}
	for _, s := range tm.spans.GetSpans().Snapshots() {
		if v, ok := spanAttr(s, redissonotel.AttrKind); ok && strings.Contains(v.AsString(), " ") {
			t.Errorf("span %s: %s=%q has a space", s.Name(), redissonotel.AttrKind, v.AsString())
		}
	}
	// Errors keep the words.
	if _, err := bounded.TrySetCapacity(ctx, -1); err == nil || !strings.Contains(err.Error(), "bounded blocking queue") {
		t.Errorf("TrySetCapacity(-1) error = %v, want one naming the bounded blocking queue", err)
	}
}

// Two clients registered with one Observer are two series of each gauge,
// told apart by redisson.client (their IDs by default), each with its own
// client's value; clients registered under one name share a series.
func TestGaugesOneSeriesPerClient(t *testing.T) {
	tm := newTelemetry(t)
	a := newClient(t, tm.obs, nil, nil)
	b := newClient(t, tm.obs, nil, nil)
	defer tm.obs.RegisterClient(a)()
	defer tm.obs.RegisterClient(b)()
	ctx := context.Background()
	name := uniqueName(t)
	for i, l := range []*redisson.Lock{a.GetLock(name + ":1"), a.GetLock(name + ":2"), b.GetLock(name + ":3")} {
		if ok, err := l.TryLock(ctx, 0, time.Minute); err != nil || !ok {
			t.Fatalf("TryLock %d = %v, %v", i, ok, err)
		}
		t.Cleanup(func() { _ = l.Unlock(context.Background()) })
	}
	got := gaugeByClient(t, tm.collect(t), redissonotel.MetricLeasesHeld)
	want := map[string]int64{a.ID(): 2, b.ID(): 1}
	if len(got) != 2 || got[a.ID()] != 2 || got[b.ID()] != 1 {
		t.Errorf("%s by client = %v, want %v", redissonotel.MetricLeasesHeld, got, want)
	}
	for _, metric := range []string{redissonotel.MetricWaiters, redissonotel.MetricChannels, redissonotel.MetricConnections} {
		if n := len(gaugeByClient(t, tm.collect(t), metric)); n != 2 {
			t.Errorf("%s: %d series, want 2", metric, n)
		}
	}

	// Under one name: one series, the sum.
	tm2 := newTelemetry(t)
	defer tm2.obs.RegisterClient(a, redissonotel.WithClientName("all"))()
	defer tm2.obs.RegisterClient(b, redissonotel.WithClientName("all"))()
	if got := gaugeByClient(t, tm2.collect(t), redissonotel.MetricLeasesHeld); len(got) != 1 || got["all"] != 3 {
		t.Errorf("%s under one name = %v, want map[all:3]", redissonotel.MetricLeasesHeld, got)
	}
}

// gaugeByClient returns the gauge's values by their redisson.client
// attribute, failing on a point without one or a client seen twice.
func gaugeByClient(t *testing.T, rm metricdata.ResourceMetrics, name string) map[string]int64 {
	t.Helper()
	m, ok := findMetric(rm, name)
	if !ok {
		t.Fatalf("no metric %s", name)
	}
	out := map[string]int64{}
	for _, p := range m.Data.(metricdata.Gauge[int64]).DataPoints {
		v, ok := p.Attributes.Value(redissonotel.AttrClient)
		if !ok {
			t.Fatalf("%s: a point without %s: %v", name, redissonotel.AttrClient, p.Attributes.Encoded(attribute.DefaultEncoder()))
		}
		if _, dup := out[v.AsString()]; dup {
			t.Fatalf("%s: client %s twice", name, v.AsString())
		}
		out[v.AsString()] = p.Value
	}
	return out
}
