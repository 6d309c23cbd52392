package httplimit

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// A GCRA limiter's RateLimit-Policy and legacy fields say the same quota,
// the burst, and the policy's window is the time to regain it; r never
// exceeds q. (One response used to carry q=20;w=1 beside
// X-RateLimit-Limit: 5.)
func TestGCRAPolicyAndLegacyFieldsAgree(t *testing.T) {
	c, rdb := newRedisson(t)
	for _, tc := range []struct {
		rate   int64
		period time.Duration
		burst  int64
		policy string
	}{
		{100, time.Minute, 20, `"default";q=20;w=12`}, // 600ms × 20
		{10, time.Minute, 5, `"default";q=5;w=30`},
		{20, time.Second, 5, `"default";q=5;w=1`}, // 50ms × 5, rounded up
		{3, time.Minute, 3, `"default";q=3;w=60`}, // burst = rate: the period
		{1, time.Hour, 10, `"default";q=10;w=36000`},
	} {
		l := c.GetGCRALimiter(limiterName(t, rdb), tc.rate, tc.period, tc.burst)
		h := mustNew(t, l, &Options{LegacyHeaders: true})
		for i := range tc.burst + 1 {
			w := serve(h, "192.0.2.1:1")
			hd := w.Header()
			if got := hd.Get("RateLimit-Policy"); got != tc.policy {
				t.Errorf("%d/%v burst %d: RateLimit-Policy = %q; want %q", tc.rate, tc.period, tc.burst, got, tc.policy)
			}
			q := strings.TrimPrefix(strings.Split(tc.policy, ";")[1], "q=")
			if got := hd.Get("X-RateLimit-Limit"); got != q {
				t.Errorf("%d/%v burst %d: X-RateLimit-Limit = %q; want %s, the policy's q", tc.rate, tc.period, tc.burst, got, q)
			}
			r, _ := strconv.ParseInt(hd.Get("X-RateLimit-Remaining"), 10, 64)
			if max, _ := strconv.ParseInt(q, 10, 64); r > max || r < 0 {
				t.Errorf("request %d: X-RateLimit-Remaining %d outside 0..q=%d", i, r, max)
			}
			if !strings.Contains(hd.Get("RateLimit"), ";r="+hd.Get("X-RateLimit-Remaining")+";") {
				t.Errorf("request %d: RateLimit %q and X-RateLimit-Remaining %q disagree", i, hd.Get("RateLimit"), hd.Get("X-RateLimit-Remaining"))
			}
			if i == tc.burst && w.Code != 429 {
				t.Errorf("%d/%v burst %d: request %d: status %d; want 429 after the burst", tc.rate, tc.period, tc.burst, i, w.Code)
			}
		}
	}
}
