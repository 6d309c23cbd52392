package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/goredisson/redisson"
)

// app runs one command.
type app struct {
	cfg            config
	c              *redisson.Client
	stdin          io.Reader
	stdout, stderr io.Writer
}

// bounded is ctx bounded by -timeout.
func (a *app) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, a.cfg.timeout)
}

// inspectLock reads a lock of kind lock, fairlock or rwlock.
func (a *app) inspectLock(ctx context.Context, kind, name string) (redisson.LockInfo, error) {
	ctx, cancel := a.bounded(ctx)
	defer cancel()
	switch kind {
	case "fairlock":
		return a.c.InspectFairLock(ctx, name)
	case "rwlock":
		return a.c.InspectReadWriteLock(ctx, name)
	}
	return a.c.InspectLock(ctx, name)
}

// electionInfo is what inspect election shows: the leader of record (nil
// when nobody leads) and the election's lock.
type electionInfo struct {
	Name   string            `json:"name"`
	Leader *redisson.Leader  `json:"leader"`
	Lock   redisson.LockInfo `json:"lock"`
}

// inspectElection prints an election; no leader is exit 3 after its output.
func (a *app) inspectElection(ctx context.Context, name string) error {
	ctx, cancel := a.bounded(ctx)
	defer cancel()
	info := electionInfo{Name: name}
	ld, err := a.c.GetElection(name).Leader(ctx)
	switch {
	case err == nil:
		info.Leader = &ld
	case !errors.Is(err, redisson.ErrNoLeader):
		return err
	}
	if info.Lock, err = a.c.InspectLock(ctx, name); err != nil {
		return err
	}
	if err := a.print(info, func(w *tabwriter.Writer) { renderElection(w, info) }); err != nil {
		return err
	}
	if info.Leader == nil {
		return fmt.Errorf("election %q: %w", name, errNoLeader)
	}
	return nil
}

// inspect prints one object; a lock not held is exit 3 after its output.
func (a *app) inspect(ctx context.Context, kind, name string) error {
	switch kind {
	case "election":
		return a.inspectElection(ctx, name)
	case "reliablequeue":
		return a.inspectReliableQueue(ctx, name)
	case "deadletters":
		return a.deadLetters(ctx, name)
	case "reliabletopic":
		return a.inspectReliableTopic(ctx, name)
	}
	if lockKinds[kind] {
		info, err := a.inspectLock(ctx, kind, name)
		if err != nil {
			return err
		}
		if err := a.print(info, func(w *tabwriter.Writer) { renderLock(w, info) }); err != nil {
			return err
		}
		if !info.Held {
			return fmt.Errorf("%s %q: %w", kind, name, errNotHeld)
		}
		return nil
	}
	ctx, cancel := a.bounded(ctx)
	defer cancel()
	codec, _ := codecOf(a.cfg.codec) // checked by parse
	if a.cfg.raw {
		codec = redisson.BytesCodec{}
	}
	var v any
	var err error
	switch kind {
	case "semaphore":
		v, err = a.c.InspectSemaphore(ctx, name)
	case "permits":
		v, err = a.c.InspectPermitExpirableSemaphore(ctx, name)
	case "latch":
		v, err = a.c.InspectCountDownLatch(ctx, name)
	case "ratelimiter":
		v, err = a.c.InspectRateLimiter(ctx, name)
	case "scheduler":
		v, err = a.c.InspectScheduler(ctx, name)
	case "bucket":
		var b redisson.BucketInfo
		b, err = a.c.InspectBucket(ctx, name, codec)
		b.Value = a.shown(b.Value)
		v = b
	case "map":
		var m redisson.MapInfo
		m, err = a.c.InspectMap(ctx, name, codec, 0, a.cfg.page)
		for i := range m.Entries {
			m.Entries[i].Key, m.Entries[i].Value = a.shown(m.Entries[i].Key), a.shown(m.Entries[i].Value)
		}
		if len(m.Entries) > a.cfg.page { // HSCAN's COUNT is a hint
			m.Entries = m.Entries[:a.cfg.page]
		}
		v = m
	case "mapcache":
		var m redisson.MapCacheInfo
		m, err = a.c.InspectMapCache(ctx, name, codec, 0, a.cfg.page)
		for i := range m.Entries {
			m.Entries[i].Key, m.Entries[i].Value = a.shown(m.Entries[i].Key), a.shown(m.Entries[i].Value)
		}
		if len(m.Entries) > a.cfg.page { // HSCAN's COUNT is a hint
			m.Entries = m.Entries[:a.cfg.page]
		}
		v = m
	case "queue":
		var q redisson.QueueInfo
		q, err = a.c.InspectQueue(ctx, name, codec)
		q.Head = a.shown(q.Head)
		v = q
	}
	if err != nil {
		return err
	}
	return a.print(v, func(w *tabwriter.Writer) { renderObject(w, v) })
}

// print writes v as indented JSON with -json, else as text through a
// tabwriter.
func (a *app) print(v any, text func(w *tabwriter.Writer)) error {
	if a.cfg.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	text(w)
	return w.Flush()
}

// list prints the objects, flushing the table every listFlush rows (and
// -json one object per line), so a huge keyspace is streamed.
func (a *app) list(ctx context.Context, pattern string) error {
	const listFlush = 500
	it := a.c.ListObjects(pattern, 200)
	enc := json.NewEncoder(a.stdout)
	w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	cluster := a.cfg.cluster != ""
	header := func() {
		if cluster {
			fmt.Fprintln(w, "KEY\tKIND\tNAME\tTYPE\tTTL\tNODE")
		} else {
			fmt.Fprintln(w, "KEY\tKIND\tNAME\tTYPE\tTTL")
		}
	}
	if !a.cfg.json {
		header()
	}
	rows := 0
	for o := range it.All(ctx) {
		if a.cfg.json {
			if err := enc.Encode(o); err != nil {
				return err
			}
			continue
		}
		ttl := "-"
		if !o.NoExpiry {
			ttl = human(o.TTL)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s", o.Key, o.Kind, o.Name, o.Type, ttl)
		if cluster {
			fmt.Fprintf(w, "\t%s", o.Node)
		}
		fmt.Fprintln(w)
		if rows++; rows%listFlush == 0 {
			w.Flush()
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	if !a.cfg.json {
		w.Flush()
		fmt.Fprintf(a.stderr, "%d keys\n", rows)
	}
	return nil
}

// forceUnlock shows the holders, asks unless -yes, and force-unlocks with
// the library's ForceUnlock, which publishes the unlock message so waiters
// wake.
func (a *app) forceUnlock(ctx context.Context, kind, name string) error {
	info, err := a.inspectLock(ctx, kind, name)
	if err != nil {
		return err
	}
	if !info.Held {
		return fmt.Errorf("%s %q: %w", kind, name, errNotHeld)
	}
	if !a.cfg.yes {
		fmt.Fprintf(a.stderr, "%s %q is held by %s (lease %s). Force-unlock it? [y/N] ", kind, name, ownerList(info), leaseText(info))
		line, _ := bufio.NewReader(a.stdin).ReadString('\n')
		if ans := strings.ToLower(strings.TrimSpace(line)); ans != "y" && ans != "yes" {
			return fmt.Errorf("%s %q: %w", kind, name, errRefused)
		}
	}
	bctx, cancel := a.bounded(ctx)
	defer cancel()
	var done bool
	switch kind {
	case "lock":
		done, err = a.c.GetLock(name).ForceUnlock(bctx)
	case "fairlock":
		done, err = a.c.GetFairLock(name).ForceUnlock(bctx)
	case "rwlock":
		rw := a.c.GetReadWriteLock(name)
		if done, err = rw.WriteLock().ForceUnlock(bctx); err == nil && !done {
			done, err = rw.ReadLock().ForceUnlock(bctx)
		}
	}
	switch {
	case err != nil:
		return err
	case !done: // released meanwhile
		return fmt.Errorf("%s %q: %w (released meanwhile)", kind, name, errNotHeld)
	}
	if a.cfg.json {
		return json.NewEncoder(a.stdout).Encode(map[string]any{"force_unlocked": true, "kind": kind, "name": name, "owners": info.Owners})
	}
	fmt.Fprintf(a.stdout, "force-unlocked %s %q (was held by %s)\n", kind, name, ownerList(info))
	return nil
}

// watch redraws a lock's state every -interval, -count times (0: until
// interrupted). On a terminal each frame replaces the last, as top does;
// elsewhere frames follow each other.
func (a *app) watch(ctx context.Context, kind, name string) error {
	tty := isTerminal(a.stdout)
	for i := 1; a.cfg.count == 0 || i <= a.cfg.count; i++ {
		info, err := a.inspectLock(ctx, kind, name)
		if ctx.Err() != nil {
			return nil // interrupted
		}
		if err != nil {
			return err
		}
		if a.cfg.json {
			if err := json.NewEncoder(a.stdout).Encode(info); err != nil {
				return err
			}
		} else {
			if tty {
				fmt.Fprint(a.stdout, "\x1b[H\x1b[2J")
			} else if i > 1 {
				fmt.Fprintln(a.stdout)
			}
			fmt.Fprintf(a.stdout, "redissonctl watch %s %q, every %s, at %s (refresh %d)\n\n", kind, name, a.cfg.interval,
				info.ServerTime.UTC().Format("15:04:05.000"), i)
			w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			renderLock(w, info)
			w.Flush()
		}
		if a.cfg.count != 0 && i == a.cfg.count {
			break
		}
		t := time.NewTimer(a.cfg.interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
	return nil
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// rawValue is a value shown as stored (-raw): quoted, not JSON.
type rawValue []byte

// MarshalJSON writes a raw value as a JSON string when it is UTF-8, else
// as {"base64": ...}.
func (r rawValue) MarshalJSON() ([]byte, error) { return json.Marshal(jsonable([]byte(r))) }

// shown is what a decoded value prints as: with -raw, a rawValue; else
// jsonable's.
func (a *app) shown(v any) any {
	if b, ok := v.([]byte); ok && a.cfg.raw {
		return rawValue(b)
	}
	return jsonable(v)
}

// jsonable turns the generic values codecs decode into values
// encoding/json accepts (msgpack maps may have non-string keys).
func jsonable(v any) any {
	switch x := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
	case []byte: // JSON would write base64 silently: say so when not UTF-8
		if utf8.Valid(x) {
			return string(x)
		}
		return map[string]string{"base64": base64.StdEncoding.EncodeToString(x)}
	}
	return v
}
