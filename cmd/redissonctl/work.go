package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/goredisson/redisson"
)

// The work layer and the recipes: a reliable queue, its dead letters, a
// reliable topic, an idempotency key.

// queueView is what inspect reliablequeue prints: the state in Redis and,
// for each job in flight, its lease left under -lease.
type queueView struct {
	redisson.ReliableQueueInfo
	Lease time.Duration `json:"lease"` // -lease: the workers' WorkerOptions.Lease
}

// inspectReliableQueue prints a reliable queue.
func (a *app) inspectReliableQueue(ctx context.Context, name string) error {
	ctx, cancel := a.bounded(ctx)
	defer cancel()
	info, err := a.c.InspectReliableQueue(ctx, name)
	if err != nil {
		return err
	}
	v := queueView{ReliableQueueInfo: info, Lease: a.cfg.lease}
	return a.print(v, func(w *tabwriter.Writer) { renderReliableQueue(w, v) })
}

func renderReliableQueue(w *tabwriter.Writer, v queueView) {
	fmt.Fprintf(w, "reliable queue\t%s\n", v.Name)
	fmt.Fprintf(w, "ready\t%d\n", v.Ready)
	lag := "-"
	if v.Ready > 0 {
		lag = human(v.OldestReady)
	}
	fmt.Fprintf(w, "oldest ready (lag)\t%s\n", lag)
	fmt.Fprintf(w, "in flight\t%d\n", v.InFlight)
	due := ""
	if !v.NextDue.IsZero() {
		due = " (next due in " + human(v.NextDue.Sub(v.ServerTime)) + ")"
	}
	fmt.Fprintf(w, "delayed\t%d%s\n", v.Delayed, due)
	fmt.Fprintf(w, "dead letters\t%d\n", v.Dead)
	if len(v.Workers) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "WORKER\tIN FLIGHT\tIDLE")
		for _, c := range v.Workers {
			fmt.Fprintf(w, "%s\t%d\t%s\n", c.Consumer, c.InFlight, human(c.Idle))
		}
	}
	if len(v.Jobs) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "JOB\tWORKER\tDELIVERIES\tIDLE\tLEASE LEFT (of %s)\n", human(v.Lease))
		for _, j := range v.Jobs {
			left := "expired: next fetch takes it over"
			if d := v.Lease - j.Idle; d > 0 {
				left = human(d)
			}
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\n", j.Entry, j.Consumer, j.Deliveries, human(j.Idle), left)
		}
		if n := v.InFlight - int64(len(v.Jobs)); n > 0 {
			fmt.Fprintf(w, "...\t%d more\n", n)
		}
	}
}

// deadLetterView is one dead letter as printed (value as JSON).
type deadLetterView struct {
	ID       string    `json:"id"`
	JobID    string    `json:"job_id"`
	Value    any       `json:"value"`
	Error    string    `json:"error,omitempty"` // why Value is missing
	Reason   string    `json:"reason"`
	Attempts int       `json:"attempts"`
	Enqueued time.Time `json:"enqueued"`
	Died     time.Time `json:"died"`
}

// queue is a handle on the reliable queue called name whose values decode
// with -codec (as any), or stay bytes with -raw, with the partitions its
// workers recorded (so that every partition's dead letters are seen).
func (a *app) queue(ctx context.Context, name string) *redisson.ReliableQueue[any] {
	codec, _ := codecOf(a.cfg.codec) // checked by parse
	if a.cfg.raw {
		codec = redisson.BytesCodec{}
	}
	parts := 1
	if info, err := a.c.InspectReliableQueue(ctx, name); err == nil {
		parts = info.Partitions
	}
	return redisson.GetReliableQueue[any](a.c, name, redisson.WithCodec(codec), redisson.WithPartitions(parts))
}

// deadLetters prints the first -page dead letters of a reliable queue.
func (a *app) deadLetters(ctx context.Context, name string) error {
	ctx, cancel := a.bounded(ctx)
	defer cancel()
	info, err := a.c.InspectReliableQueue(ctx, name)
	if err != nil {
		return err
	}
	dl, err := a.queue(ctx, name).DeadLetters(ctx, "", a.cfg.page)
	if err != nil {
		return err
	}
	views := make([]deadLetterView, 0, len(dl))
	for _, d := range dl {
		v := deadLetterView{ID: d.ID, JobID: d.JobID, Value: a.shown(d.Value), Reason: d.Reason, Attempts: d.Attempts,
			Enqueued: d.EnqueuedAt, Died: d.DiedAt}
		if d.Err != nil {
			v.Value, v.Error = nil, strings.TrimPrefix(d.Err.Error(), "redisson: ")
		}
		views = append(views, v)
	}
	out := struct {
		Name  string           `json:"name"`
		Count int64            `json:"count"`
		Shown []deadLetterView `json:"dead_letters"`
	}{name, info.Dead, views}
	return a.print(out, func(w *tabwriter.Writer) {
		fmt.Fprintf(w, "dead letters of\t%s\n", name)
		fmt.Fprintf(w, "count\t%d\n", info.Dead)
		if len(views) == 0 {
			return
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "ID\tJOB\tATTEMPTS\tDIED\tREASON\tVALUE")
		for _, v := range views {
			val := v.Error
			if v.Error == "" {
				val = valueText(v.Value)
			}
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\n", v.ID, v.JobID, v.Attempts, v.Died.UTC().Format(time.RFC3339),
				oneLine(v.Reason, 60), oneLine(val, 60))
		}
		if n := info.Dead - int64(len(views)); n > 0 {
			fmt.Fprintf(w, "...\t%d more (-page)\n", n)
		}
	})
}

// oneLine is s on one line, cut to at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// confirm asks question on stderr unless -yes; a refusal is errRefused,
// naming what.
func (a *app) confirm(what, question string) error {
	if a.cfg.yes {
		return nil
	}
	fmt.Fprintf(a.stderr, "%s [y/N] ", question)
	line, _ := bufio.NewReader(a.stdin).ReadString('\n')
	if ans := strings.ToLower(strings.TrimSpace(line)); ans != "y" && ans != "yes" {
		return fmt.Errorf("%s: %w", what, errRefused)
	}
	return nil
}

// requeue puts one dead letter (id) or all of them back in their queue.
func (a *app) requeue(ctx context.Context, name, id string) error {
	ctx, cancel := a.bounded(ctx)
	defer cancel()
	info, err := a.c.InspectReliableQueue(ctx, name)
	if err != nil {
		return err
	}
	q := a.queue(ctx, name)
	if id != "" {
		if err := a.confirm(fmt.Sprintf("requeue dead letter %s of %q", id, name), fmt.Sprintf("Requeue dead letter %s of %q?", id, name)); err != nil {
			return err
		}
		ok, err := q.RequeueDeadLetter(ctx, id)
		switch {
		case err != nil:
			return err
		case !ok:
			return fmt.Errorf("dead letter %s of %q: %w", id, name, redisson.ErrNotFound)
		}
		return a.done(map[string]any{"requeued": 1, "name": name, "id": id}, "requeued dead letter %s of %q\n", id, name)
	}
	if info.Dead == 0 {
		return fmt.Errorf("dead letters of %q: %w", name, redisson.ErrNotFound)
	}
	if err := a.confirm(fmt.Sprintf("requeue dead letters of %q", name), fmt.Sprintf("Requeue the %d dead letters of %q?", info.Dead, name)); err != nil {
		return err
	}
	n, err := q.RequeueDeadLetters(ctx)
	if err != nil {
		return err
	}
	return a.done(map[string]any{"requeued": n, "name": name}, "requeued %d dead letters of %q\n", n, name)
}

// purge deletes a queue's dead letters.
func (a *app) purge(ctx context.Context, name string) error {
	ctx, cancel := a.bounded(ctx)
	defer cancel()
	info, err := a.c.InspectReliableQueue(ctx, name)
	if err != nil {
		return err
	}
	if info.Dead == 0 {
		return fmt.Errorf("dead letters of %q: %w", name, redisson.ErrNotFound)
	}
	if err := a.confirm(fmt.Sprintf("purge dead letters of %q", name), fmt.Sprintf("Delete the %d dead letters of %q for good?", info.Dead, name)); err != nil {
		return err
	}
	n, err := a.queue(ctx, name).PurgeDeadLetters(ctx)
	if err != nil {
		return err
	}
	return a.done(map[string]any{"purged": n, "name": name}, "purged %d dead letters of %q\n", n, name)
}

// done prints an action's result: v with -json, else the line.
func (a *app) done(v any, format string, args ...any) error {
	if a.cfg.json {
		return json.NewEncoder(a.stdout).Encode(v)
	}
	_, err := fmt.Fprintf(a.stdout, format, args...)
	return err
}

// inspectReliableTopic prints a reliable topic and its subscribers.
func (a *app) inspectReliableTopic(ctx context.Context, name string) error {
	ctx, cancel := a.bounded(ctx)
	defer cancel()
	info, err := a.c.InspectReliableTopic(ctx, name)
	if err != nil {
		return err
	}
	return a.print(info, func(w *tabwriter.Writer) {
		fmt.Fprintf(w, "reliable topic\t%s\n", info.Name)
		fmt.Fprintf(w, "messages\t%d\n", info.Length)
		last := info.LastID
		if last == "" {
			last = "-"
		}
		fmt.Fprintf(w, "last published\t%s\n", last)
		fmt.Fprintf(w, "subscribers\t%d\n", len(info.Subscribers))
		if len(info.Subscribers) == 0 {
			return
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "SUBSCRIBER\tLAG\tPENDING\tLAST DELIVERED\tEXPIRES IN")
		for _, s := range info.Subscribers {
			lag, exp := "?", "-"
			if s.Lag >= 0 {
				lag = fmt.Sprint(s.Lag)
			}
			if !s.Expires.IsZero() {
				exp = human(s.Expires.Sub(info.ServerTime))
			}
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\n", s.ID, lag, s.Pending, s.LastDelivered, exp)
		}
	})
}

// idempotencyRecord is the record name httplimit.NewIdempotency gives key
// under scope in the middleware called name.
func idempotencyRecord(name, scope, key string) string {
	id := sha256.Sum256([]byte(scope + "\x00" + key))
	return name + ":{" + hex.EncodeToString(id[:]) + "}"
}

// inspectIdempotency prints the record of one Idempotency-Key.
func (a *app) inspectIdempotency(ctx context.Context, name, key string) error {
	ctx, cancel := a.bounded(ctx)
	defer cancel()
	info, err := a.c.InspectIdempotencyRecord(ctx, idempotencyRecord(name, a.cfg.scope, key))
	if err != nil {
		return err
	}
	body := a.shown(info.Body)
	view := struct {
		redisson.IdempotencyRecordInfo
		Key  string `json:"key"`
		Body any    `json:"body"`
	}{info, key, body}
	return a.print(view, func(w *tabwriter.Writer) {
		fmt.Fprintf(w, "idempotency key\t%s\n", key)
		fmt.Fprintf(w, "record\t%s\n", info.Name)
		fmt.Fprintf(w, "state\t%s\n", info.State)
		fmt.Fprintf(w, "fingerprint\t%s\n", info.Fingerprint)
		what := "lease left"
		if info.State == "done" {
			what = "retained for"
			fmt.Fprintf(w, "status\t%d\n", info.Status)
			fmt.Fprintf(w, "headers\t%s\n", oneLine(info.Header, 100))
			fmt.Fprintf(w, "body\t%d bytes: %s\n", len(info.Body), oneLine(valueText(body), 60))
		}
		fmt.Fprintf(w, "%s\t%s\n", what, human(info.TTL))
	})
}
