package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/goredisson/redisson"
)

// limiterView is what inspect limiter prints: the state in Redis and, with
// -limit and -window, the limiter's Peek.
type limiterView struct {
	redisson.KeyedLimiterInfo
	Peek *peekView `json:"peek,omitempty"`
}

// peekView is a RateDecision with JSON names (durations in nanoseconds).
type peekView struct {
	Allowed    bool          `json:"allowed"`
	Limit      int64         `json:"limit"`
	Remaining  int64         `json:"remaining"`
	RetryAfter time.Duration `json:"retry_after"`
	ResetAfter time.Duration `json:"reset_after"`
}

// handle builds a handle on the keyed limiter called name of kind, with the
// configuration of -limit, -window and -burst; without them, a placeholder
// configuration, which Reset does not depend on.
func (a *app) handle(kind redisson.ObjectKind, name string) redisson.KeyedLimiter {
	limit, window, burst := a.cfg.limit, a.cfg.window, a.cfg.burst
	if limit == 0 {
		limit, window = 1, time.Second
	}
	if burst == 0 {
		burst = limit
	}
	if kind == redisson.KindGCRALimiter {
		return a.c.GetGCRALimiter(name, limit, window, burst)
	}
	return a.c.GetFixedWindowLimiter(name, limit, window)
}

// inspectLimiter prints one identity of a keyed limiter; an identity
// without state is exit 3 after its output.
func (a *app) inspectLimiter(ctx context.Context, name, key string) error {
	ctx, cancel := a.bounded(ctx)
	defer cancel()
	info, err := a.c.InspectKeyedLimiter(ctx, name, key)
	if err != nil {
		return err
	}
	v := limiterView{KeyedLimiterInfo: info}
	if a.cfg.limit > 0 && info.Present {
		d, err := a.handle(info.Kind, name).Peek(ctx, key)
		if err != nil {
			return err
		}
		v.Peek = &peekView{d.Allowed, d.Limit, d.Remaining, d.RetryAfter, d.ResetAfter}
	}
	if err := a.print(v, func(w *tabwriter.Writer) { renderLimiter(w, v) }); err != nil {
		return err
	}
	if !info.Present {
		return fmt.Errorf("limiter %q key %q: %w (no state: a full allowance)", name, key, redisson.ErrNotFound)
	}
	return nil
}

// renderLimiter writes one identity's state.
func renderLimiter(w *tabwriter.Writer, v limiterView) {
	fmt.Fprintf(w, "keyed limiter\t%s\n", v.Name)
	fmt.Fprintf(w, "key\t%s\n", v.Key)
	fmt.Fprintf(w, "redis key\t%s\n", v.RedisKey)
	if !v.Present {
		fmt.Fprintf(w, "state\tnone (a full allowance)\n")
		return
	}
	fmt.Fprintf(w, "kind\t%s\n", v.Kind)
	if v.Kind == redisson.KindGCRALimiter {
		fmt.Fprintf(w, "tat\t%s\n", v.TAT.UTC().Format(time.RFC3339Nano))
	} else {
		fmt.Fprintf(w, "used in window\t%d\n", v.Used)
	}
	reset := human(v.ResetAfter)
	if v.NoExpiry {
		reset = "never (no expiry: not written by a limiter)"
	}
	fmt.Fprintf(w, "full allowance in\t%s\n", reset)
	if p := v.Peek; p != nil {
		fmt.Fprintf(w, "remaining\t%d of %d\n", p.Remaining, p.Limit)
		next := "now"
		if !p.Allowed {
			next = "in " + human(p.RetryAfter)
		}
		fmt.Fprintf(w, "next permit\t%s\n", next)
	} else {
		fmt.Fprintf(w, "remaining\t- (give -limit and -window, and -burst for GCRA)\n")
	}
}

// resetLimiter shows the identity's state, asks unless -yes, and resets it
// with the limiter's Reset.
func (a *app) resetLimiter(ctx context.Context, name, key string) error {
	bctx, cancel := a.bounded(ctx)
	defer cancel()
	info, err := a.c.InspectKeyedLimiter(bctx, name, key)
	if err != nil {
		return err
	}
	if !info.Present {
		return fmt.Errorf("limiter %q key %q: %w (no state: a full allowance already)", name, key, redisson.ErrNotFound)
	}
	if !a.cfg.yes {
		fmt.Fprintf(a.stderr, "%s %q key %q (full allowance in %s). Reset it? [y/N] ", info.Kind, name, key, human(info.ResetAfter))
		line, _ := bufio.NewReader(a.stdin).ReadString('\n')
		if ans := strings.ToLower(strings.TrimSpace(line)); ans != "y" && ans != "yes" {
			return fmt.Errorf("reset limiter %q key %q: %w", name, key, errRefused)
		}
	}
	bctx, cancel = a.bounded(ctx)
	defer cancel()
	if err := a.handle(info.Kind, name).Reset(bctx, key); err != nil {
		return err
	}
	if a.cfg.json {
		return json.NewEncoder(a.stdout).Encode(map[string]any{"reset": true, "kind": info.Kind, "name": name, "key": key})
	}
	fmt.Fprintf(a.stdout, "reset %s %q key %q\n", info.Kind, name, strconv.Quote(key)[1:len(strconv.Quote(key))-1])
	return nil
}
