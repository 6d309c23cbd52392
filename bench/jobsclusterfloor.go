package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The jobs-cluster scenario's floor: what Redis itself charges a server
// for a job's core commands when the same paced load is split over three
// servers, with no library in the way. Each job is XADD, XREADGROUP of
// one entry, XACK and XDEL, plain and one at a time, from jcProducers
// goroutines at the paced rate: on one server, then on the cluster with
// one stream per master, the jobs dealt round-robin. A server waking for
// fewer commands a second spends more CPU on each (its event loop's
// wake-ups, cold caches, the cores' other work), so its cost per job does
// not fall to a third; the ratio this floor reaches bounds what a client
// can show on this machine.

// jcFloorRun runs jobs floor jobs at pace over admins (each with a stream
// of its own) and returns each server's CPU over the run.
func jcFloorRun(ctx context.Context, admins []*redis.Client, jobs int, pace float64) ([]time.Duration, error) {
	keys := make([]string, len(admins))
	for m, a := range admins {
		for i := 0; keys[m] == ""; i++ {
			k := fmt.Sprintf("floor-%d", i)
			err := a.XGroupCreateMkStream(ctx, k, "g", "$").Err()
			switch {
			case err == nil:
				keys[m] = k
			case strings.HasPrefix(err.Error(), "MOVED"):
				if i > 10000 {
					return nil, fmt.Errorf("no key of master %d found", m+1)
				}
			default:
				return nil, err
			}
		}
	}
	defer func() {
		for m, a := range admins {
			_ = a.Del(context.WithoutCancel(ctx), keys[m]).Err()
		}
	}()
	before := make([]time.Duration, len(admins))
	for m, a := range admins {
		c, err := serverCPU(ctx, a)
		if err != nil {
			return nil, err
		}
		before[m] = c
	}
	err := jcPaced(jobs, pace, func(i int) error {
		a, k := admins[i%len(admins)], keys[i%len(admins)]
		id, err := a.XAdd(ctx, &redis.XAddArgs{Stream: k, Values: []string{"payload", "x"}}).Result()
		if err == nil {
			// Another goroutine's read may have taken this entry (and
			// left its own for a later read): nil is fine.
			err = a.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{k, ">"}, Count: 1, Block: -1}).Err()
			if errors.Is(err, redis.Nil) {
				err = nil
			}
		}
		if err == nil {
			err = a.XAck(ctx, k, "g", id).Err()
		}
		if err == nil {
			err = a.XDel(ctx, k, id).Err()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]time.Duration, len(admins))
	for m, a := range admins {
		c, err := serverCPU(ctx, a)
		if err != nil {
			return nil, err
		}
		out[m] = c - before[m]
	}
	return out, nil
}

// jcFloorTable runs the floor for rounds rounds, one server then the
// masters in each, and returns its table.
func jcFloorTable(ctx context.Context, rounds int, sadmin *redis.Client, admins []*redis.Client, jobs int, pace float64) *table {
	t := &table{
		title: fmt.Sprintf("The floor without the library: a job's core commands at %.0f jobs/s, on one server and split over the 3 masters", pace),
		note: fmt.Sprintf("Each job is XADD, XREADGROUP (one entry), XACK and XDEL, plain and one at a time, from %d goroutines "+
			"at the paced rate; on the cluster one stream per master, the jobs dealt round-robin. Redis CPU (INFO cpu) per job of "+
			"the run; \"vs one server\" as above: Redis's own cost curve on this machine, against the target's <= %.3f.",
			jcProducers, jcTarget),
		cols: []col{
			{key: "cpu", head: "Redis CPU µs/job (min-max)", format: "%.1f", spread: true},
			{key: "ratio", head: "vs one server (min-max)", format: "%.3f", spread: true},
		},
	}
	one := t.row("floor, one server", "4 plain commands per job", kindFloor)
	rows := make([]*row, len(admins))
	for m := range admins {
		rows[m] = t.row(fmt.Sprintf("floor, master %d", m+1), "a third of the jobs", kindFloor)
	}
	for range rounds {
		a, err := jcFloorRun(ctx, []*redis.Client{sadmin}, jobs, pace)
		b, errB := jcFloorRun(ctx, admins, jobs, pace)
		if err != nil {
			one.add(nil, err)
		} else {
			one.add(map[string]float64{"cpu": float64(a[0].Microseconds()) / float64(jobs), "ratio": 1}, nil)
		}
		for m := range admins {
			switch {
			case errB != nil:
				rows[m].add(nil, errB)
			case err != nil:
				rows[m].add(map[string]float64{"cpu": float64(b[m].Microseconds()) / float64(jobs)}, nil)
			default:
				rows[m].add(map[string]float64{"cpu": float64(b[m].Microseconds()) / float64(jobs), "ratio": float64(b[m]) / float64(a[0])}, nil)
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	return t
}
