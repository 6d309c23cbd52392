package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/goredisson/redisson"
)

// The text output: aligned tables, durations like 12.3s.

// human formats a duration for people: 850ms, 12.3s, 4m05s, 2h10m.
func human(d time.Duration) string {
	if d < 0 {
		return "-" + human(-d)
	}
	switch {
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// leaseText is a lock's remaining lease for people.
func leaseText(info redisson.LockInfo) string {
	switch {
	case !info.Held:
		return "-"
	case info.NoExpiry:
		return "never expires"
	}
	return human(info.Lease)
}

// ownerList names a lock's owners in one line.
func ownerList(info redisson.LockInfo) string {
	var out []string
	for _, o := range info.Owners {
		s := o.Field
		if o.Holds != 1 {
			s += fmt.Sprintf(" (%d holds)", o.Holds)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return "nobody"
	}
	return strings.Join(out, ", ")
}

// renderLock writes a lock's state: a block of facts, the owners, and a
// fair lock's queue.
func renderLock(w *tabwriter.Writer, info redisson.LockInfo) {
	state := "free"
	if info.Held {
		state = "held"
		if info.Mode != "" {
			state += " (" + info.Mode + ")"
		}
	}
	fmt.Fprintf(w, "%s\t%s\n", info.Kind, info.Name)
	fmt.Fprintf(w, "state\t%s\n", state)
	fmt.Fprintf(w, "lease\t%s\n", leaseText(info))
	token := "-"
	if info.Token != 0 {
		token = strconv.FormatInt(info.Token, 10)
	}
	fmt.Fprintf(w, "fencing token\t%s\n", token)
	if info.Kind == "fair lock" {
		fmt.Fprintf(w, "waiters\t%d (the queue below, one per waiting goroutine or thread)\n", info.QueueLength)
		fmt.Fprintf(w, "subscribers\t%d\n", info.Subscribers)
	} else {
		// A plain or read-write lock's waiters queue nowhere in Redis: they
		// wait on the channel. NUMSUB counts connections, and each client
		// multiplexes all its waiters on one subscription.
		fmt.Fprintf(w, "waiting clients\t%d (connections subscribed to %s: one per client process that waits,\n", info.Subscribers, info.Channel)
		fmt.Fprintf(w, "\tor waited in the last SubscriptionLinger; goroutines/threads per client are not visible)\n")
	}
	if len(info.Owners) > 0 {
		fmt.Fprintln(w)
		if info.Mode == "" {
			fmt.Fprintln(w, "OWNER\tCLIENT ID\tTHREAD\tHOLDS")
		} else {
			fmt.Fprintln(w, "OWNER\tCLIENT ID\tTHREAD\tHOLDS\tSIDE\tREAD LEASES")
		}
		for _, o := range info.Owners {
			fmt.Fprintf(w, "%s\t%s\t%d\t%d", o.Field, o.ClientID, o.Thread, o.Holds)
			if info.Mode != "" {
				side := "read"
				if o.Write {
					side = "write"
				}
				var leases []string
				for _, l := range o.ReadLeases {
					leases = append(leases, human(l))
				}
				fmt.Fprintf(w, "\t%s\t%s", side, strings.Join(leases, " "))
			}
			fmt.Fprintln(w)
		}
	}
	if len(info.Queue) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "POS\tWAITER\tDEADLINE IN\tALIVE\tSUBSCRIBED")
		for _, q := range info.Queue {
			deadline := "-"
			if !q.Deadline.IsZero() {
				deadline = human(q.Timeout)
			}
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\n", q.Position, q.Owner, deadline, yesNo(q.Alive), yesNo(q.Subscribed))
		}
		if n := info.QueueLength - int64(len(info.Queue)); n > 0 {
			fmt.Fprintf(w, "...\t%d more\n", n)
		}
	}
}

// renderElection writes an election's leader, then its lock.
func renderElection(w *tabwriter.Writer, info electionInfo) {
	fmt.Fprintf(w, "election\t%s\n", info.Name)
	if info.Leader == nil {
		fmt.Fprintf(w, "leader\tnone\n")
	} else {
		fmt.Fprintf(w, "leader\t%s\n", info.Leader.Value)
		fmt.Fprintf(w, "term\t%d\n", info.Leader.Term)
	}
	fmt.Fprintln(w)
	renderLock(w, info.Lock)
}

// renderObject writes the state of an object other than a lock.
func renderObject(w *tabwriter.Writer, v any) {
	switch x := v.(type) {
	case redisson.SchedulerInfo:
		renderScheduler(w, x)
	case redisson.SemaphoreInfo:
		fmt.Fprintf(w, "semaphore\t%s\n", x.Name)
		fmt.Fprintf(w, "permits\t%d\n", x.Permits)
		fmt.Fprintf(w, "wanted by queued waiters\t%d\n", x.Reserved)
		fmt.Fprintf(w, "subscribers\t%d\n", x.Subscribers)
	case redisson.PermitSemaphoreInfo:
		fmt.Fprintf(w, "permit semaphore\t%s\n", x.Name)
		fmt.Fprintf(w, "available\t%d\n", x.Available)
		fmt.Fprintf(w, "held\t%d\n", x.HeldCount)
		fmt.Fprintf(w, "subscribers\t%d\n", x.Subscribers)
		if len(x.Held) > 0 {
			fmt.Fprintln(w)
			fmt.Fprintln(w, "PERMIT\tEXPIRES IN")
			for _, p := range x.Held {
				exp := "never"
				switch {
				case p.Expired:
					exp = "expired"
				case !p.Expires.IsZero():
					exp = human(p.Expires.Sub(x.ServerTime))
				}
				fmt.Fprintf(w, "%s\t%s\n", p.ID, exp)
			}
		}
	case redisson.LatchInfo:
		fmt.Fprintf(w, "countdown latch\t%s\n", x.Name)
		fmt.Fprintf(w, "count\t%d\n", x.Count)
		fmt.Fprintf(w, "subscribers\t%d\n", x.Subscribers)
	case redisson.RateLimiterInfo:
		fmt.Fprintf(w, "rate limiter\t%s\n", x.Name)
		fmt.Fprintf(w, "type\t%s\n", x.Config.Type)
		fmt.Fprintf(w, "rate\t%d per %s\n", x.Config.Rate, human(x.Config.Interval))
		keep := "-"
		if x.Config.KeepAlive > 0 {
			keep = human(x.Config.KeepAlive) + " (" + human(x.TTL) + " left)"
		}
		fmt.Fprintf(w, "keep-alive\t%s\n", keep)
		avail := "-"
		if x.Available >= 0 {
			avail = strconv.FormatInt(x.Available, 10)
		}
		fmt.Fprintf(w, "available (overall)\t%s\n", avail)
		fmt.Fprintf(w, "granted in window\t%d permits in %d grants\n", x.Permits, x.Grants)
	case redisson.BucketInfo:
		fmt.Fprintf(w, "bucket\t%s\n", x.Name)
		fmt.Fprintf(w, "value\t%s\n", valueText(x.Value))
		fmt.Fprintf(w, "size\t%d bytes\n", x.Size)
		ttl := "none"
		if !x.NoExpiry {
			ttl = human(x.TTL)
		}
		fmt.Fprintf(w, "ttl\t%s\n", ttl)
	case redisson.MapInfo:
		fmt.Fprintf(w, "map\t%s\n", x.Name)
		fmt.Fprintf(w, "size\t%d entries\n", x.Size)
		fmt.Fprintln(w)
		fmt.Fprintln(w, "KEY\tVALUE")
		for _, e := range x.Entries {
			fmt.Fprintf(w, "%s\t%s\n", valueText(e.Key), valueText(e.Value))
		}
		if n := x.Size - int64(len(x.Entries)); n > 0 {
			fmt.Fprintf(w, "...\t%d more (-page)\n", n)
		}
	case redisson.MapCacheInfo:
		fmt.Fprintf(w, "map cache\t%s\n", x.Name)
		fmt.Fprintf(w, "size\t%d entries\n", x.Size)
		fmt.Fprintln(w)
		fmt.Fprintln(w, "KEY\tVALUE\tTTL\tIDLE LEFT")
		for _, e := range x.Entries {
			ttl, idle := "none", "none"
			if e.TTL > 0 {
				ttl = human(e.TTL)
			}
			if e.MaxIdle > 0 {
				idle = human(e.IdleLeft) + " of " + human(e.MaxIdle)
			}
			if e.Expired {
				ttl = "expired"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", valueText(e.Key), valueText(e.Value), ttl, idle)
		}
		if n := x.Size - int64(len(x.Entries)); n > 0 {
			fmt.Fprintf(w, "...\t%d more (-page)\n", n)
		}
	case redisson.QueueInfo:
		fmt.Fprintf(w, "queue\t%s\n", x.Name)
		fmt.Fprintf(w, "length\t%d\n", x.Length)
		head := "none (empty)"
		if x.Length > 0 {
			head = valueText(x.Head)
		}
		fmt.Fprintf(w, "head\t%s\n", head)
		if x.Bounded {
			fmt.Fprintf(w, "capacity\t%d free of %d\n", x.Free, x.Capacity)
		} else {
			fmt.Fprintf(w, "capacity\tunbounded\n")
		}
		if len(x.InFlight) > 0 {
			fmt.Fprintln(w)
			fmt.Fprintln(w, "CLIENT ID\tIN FLIGHT")
			ids := slices.Sorted(maps.Keys(x.InFlight))
			for _, id := range ids {
				fmt.Fprintf(w, "%s\t%d\n", id, x.InFlight[id])
			}
		}
	}
}

// valueText shows a decoded value as JSON (encoding/json of what the
// codec decoded, map keys sorted): strings quoted, numbers, objects and
// arrays as JSON writes them. Bytes that are valid UTF-8 show as a JSON
// string; others as base64 with a note. A value JSON cannot write (NaN, a
// channel) falls back to Go's syntax. With -raw, values arrive undecoded
// ([]byte) and show as quoted strings with Go's escapes.
func valueText(v any) string {
	switch x := v.(type) {
	case rawValue:
		return strconv.Quote(string(x))
	case []byte:
		if !utf8.Valid(x) {
			return "base64:" + base64.StdEncoding.EncodeToString(x) + " (not UTF-8)"
		}
		v = string(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// renderScheduler writes a scheduler's jobs.
func renderScheduler(w *tabwriter.Writer, x redisson.SchedulerInfo) {
	fmt.Fprintf(w, "scheduler\t%s\n", x.Name)
	fmt.Fprintf(w, "server clock\t%s\n", x.Now.Format(time.RFC3339Nano))
	for _, j := range x.Jobs {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "job\t%s\n", j.Name)
		fmt.Fprintf(w, "schedule\t%s (catch-up %d, overlap %v)\n", j.Schedule, j.CatchUp, j.AllowOverlap)
		fmt.Fprintf(w, "last fired\t%s\n", j.LastFired.Format(time.RFC3339Nano))
		fmt.Fprintf(w, "next\t%s\n", j.Next.Format(time.RFC3339Nano))
		fmt.Fprintf(w, "skipped\t%d\n", j.Skipped)
		for _, r := range j.Running {
			fmt.Fprintf(w, "running\ttoken %d by %s, lease until %s\n", r.Token, r.Holder, r.LeaseEnd.Format(time.RFC3339Nano))
		}
	}
}
