package redissonotel

import "testing"

func TestLabelValue(t *testing.T) {
	for in, want := range map[string]string{
		"lock":                   "lock",
		"blocking queue":         "blocking_queue",
		"bounded blocking queue": "bounded_blocking_queue",
		"map cache listener":     "map_cache_listener",
		"lock.acquire":           "lock.acquire",
		"Order  Service ":        "order_service",
		" x":                     "x",
		"a-b":                    "a-b",
		"":                       "",
		"  ":                     "_",
	} {
		if got := labelValue(in); got != want {
			t.Errorf("labelValue(%q) = %q, want %q", in, got, want)
		}
	}
}
