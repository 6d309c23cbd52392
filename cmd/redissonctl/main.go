// Command redissonctl inspects the distributed objects of redisson for Go
// and Java's Redisson in a Redis deployment: who holds a lock, for how long,
// who waits (a fair lock's queue one by one; for a plain lock the waiting
// clients its channel's PUBSUB NUMSUB counts); semaphores, latches, rate
// limiters, a keyed limiter's identities, buckets, maps and queues (values
// as JSON); reliable queues (lag, workers, jobs in flight and their lease)
// and their dead letters, reliable topics (each subscriber's lag), an
// idempotency key's record; the keys of every object; and, when a holder is
// stuck, force-unlocks a lock, gives a keyed limiter's identity a full
// allowance back, requeues or purges dead letters.
//
// Usage:
//
//	redissonctl [flags] inspect lock|fairlock|rwlock|semaphore|permits|latch|ratelimiter|bucket|map|mapcache|queue|election|reliablequeue|deadletters|reliabletopic|scheduler NAME
//	redissonctl [flags] inspect limiter NAME KEY
//	redissonctl [flags] inspect idempotency NAME KEY
//	redissonctl [flags] requeue deadletters NAME [ID]
//	redissonctl [flags] purge deadletters NAME
//	redissonctl [flags] list [PATTERN]
//	redissonctl [flags] force-unlock lock|fairlock|rwlock NAME
//	redissonctl [flags] reset limiter NAME KEY
//	redissonctl [flags] watch lock|fairlock|rwlock NAME
//
// Connection flags follow redis-cli's: -h HOST, -p PORT, -a PASSWORD, -n DB
// and -u redis[s]://[[user]:password@]host[:port][/db], which overrides the
// others whatever the order. Help is --help, as in redis-cli, since -h is
// the host (-h alone still prints it). Flags may come before or after the
// command. Exit codes: 0 ok, 1 error talking to Redis, 2 bad usage (also a
// key holding another kind of object), 3 not found or not held, 4
// force-unlock, reset, requeue or purge refused. docs/redissonctl.md is the full manual.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// Exit codes.
const (
	exitOK       = 0 // done
	exitRedis    = 1 // Redis unreachable, refused a command, or another runtime error
	exitUsage    = 2 // bad usage: unknown command or kind, missing name, bad flag, key of another type, value -codec cannot decode
	exitNotFound = 3 // the object does not exist, the lock is not held, or the election has no leader
	exitRefused  = 4 // force-unlock, reset, requeue or purge not confirmed
)

const usageText = `usage: redissonctl [flags] COMMAND ...

Commands:
  inspect KIND NAME   one object's state; KIND is lock, fairlock, rwlock,
                      semaphore, permits (permit-expirable semaphore), latch,
                      ratelimiter, bucket, map, mapcache, queue, election
                      (its leader, term and lock), reliablequeue (counts, lag,
                      workers, jobs in flight with the lease left of -lease),
                      deadletters (a reliable queue's first -page dead
                      letters), reliabletopic (subscribers, lag, pending)
                      or scheduler (its jobs, their next instant, last fired
                      and running holders)
  list [PATTERN]      the keys of every object (SCAN MATCH PATTERN, default *)
                      on every master, with their kind and TTL
  force-unlock KIND NAME
                      delete a lock (lock, fairlock, rwlock) whoever holds it
                      and wake its waiters; asks for confirmation unless -yes
  inspect limiter NAME KEY
                      one identity KEY of a keyed limiter (FixedWindowLimiter,
                      GCRALimiter): count or TAT, time to a full allowance;
                      with -limit and -window (and -burst for GCRA) also the
                      permits remaining, read with Peek (nothing is spent)
  reset limiter NAME KEY
                      give identity KEY a full allowance back (the limiter's
                      Reset); asks for confirmation unless -yes
  watch KIND NAME     redraw a lock's holder, lease and queue every -interval
  inspect idempotency NAME KEY
                      the record of Idempotency-Key KEY in the middleware
                      httplimit.NewIdempotency(c, NAME, ...), under -scope
  requeue deadletters NAME [ID]
                      put dead letter ID (or all) back in reliable queue NAME
                      as due now; asks for confirmation unless -yes
  purge deadletters NAME
                      delete reliable queue NAME's dead letters; asks for
                      confirmation unless -yes

Connection flags follow redis-cli's: -h HOST, -p PORT, -a PASSWORD, -n DB,
-u redis[s]://[[user]:password@]host[:port][/db] (the URI overrides -h, -p,
-a, -n, -user and -redis). Help is --help (-h alone also prints it).

Exit codes:
  0  ok
  1  error talking to Redis
  2  bad usage (unknown command or kind, missing name, bad flag, a key
     holding another kind of object, or a value -codec cannot decode)
  3  not found (no such object), not held (a free lock) or no leader
  4  force-unlock, reset, requeue or purge refused (not confirmed)

Flags (before or after the command):
`

// config is the command line.
type config struct {
	addr, cluster, sentinel, master string
	user, password                  string
	db                              int
	tls, tlsInsecure                bool
	tlsCA, tlsCert, tlsKey          string
	json, yes, raw                  bool
	limit, burst                    int64
	window, lease                   time.Duration
	scope                           string
	timeout, interval               time.Duration
	count, page                     int
	codec                           string
}

func main() {
	redis.SetLogger(quiet{}) // one line of our own per error, not go-redis's pool log
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// quiet is a go-redis logger that drops its messages.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// usageError is bad usage: exit 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// errRefused is a force-unlock not confirmed.
var errRefused = errors.New("refused (not confirmed)")

// errNotHeld is a lock that is not held.
var errNotHeld = errors.New("not held")

// errNoLeader is an election that nobody leads.
var errNoLeader = errors.New("no leader")

// run is the command: it returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, words, err := parse(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err == nil {
		err = dispatch(cfg, words, stdin, stdout, stderr)
	}
	if err == nil {
		return exitOK
	}
	msg := strings.ReplaceAll(strings.TrimPrefix(err.Error(), "redisson: "), "\n", " ")
	fmt.Fprintln(stderr, "redissonctl: "+msg)
	var usage usageError
	switch {
	case errors.As(err, &usage), errors.Is(err, redisson.ErrWrongType), errors.Is(err, redisson.ErrEmptyName),
		errors.Is(err, redisson.ErrInvalidName), errors.Is(err, redisson.ErrInvalidBatch), errors.Is(err, redisson.ErrCodec):
		return exitUsage
	case errors.Is(err, redisson.ErrNotFound), errors.Is(err, errNotHeld), errors.Is(err, errNoLeader):
		return exitNotFound
	case errors.Is(err, errRefused):
		return exitRefused
	}
	return exitRedis
}

// lockKinds are the kinds force-unlock and watch accept.
var lockKinds = map[string]bool{"lock": true, "fairlock": true, "rwlock": true}

// inspectKinds are the kinds inspect accepts.
var inspectKinds = map[string]bool{"lock": true, "fairlock": true, "rwlock": true, "semaphore": true,
	"permits": true, "latch": true, "ratelimiter": true, "bucket": true, "map": true,
	"mapcache": true, "queue": true, "election": true, "reliablequeue": true, "deadletters": true, "reliabletopic": true, "scheduler": true}

// dispatch checks the command's words, connects and runs it.
func dispatch(cfg config, words []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(words) == 0 {
		return usagef("no command (inspect, list, force-unlock, reset, watch, requeue, purge; --help for help)")
	}
	cmd, rest := words[0], words[1:]
	kinds := lockKinds
	switch cmd {
	case "list":
		if len(rest) > 1 {
			return usagef("list takes at most one PATTERN")
		}
	case "requeue", "purge":
		most := 2
		if cmd == "requeue" {
			most = 3
		}
		switch {
		case len(rest) == 0 || rest[0] != "deadletters":
			return usagef("%s: unknown kind %q (deadletters)", cmd, strings.Join(rest[:min(len(rest), 1)], ""))
		case len(rest) == 1 || rest[1] == "":
			return usagef("%s deadletters: missing NAME", cmd)
		case len(rest) > most:
			return usagef("%s deadletters: too many words", cmd)
		}
	case "inspect", "reset":
		if len(rest) > 0 && (rest[0] == "limiter" || rest[0] == "idempotency" && cmd == "inspect") {
			switch {
			case len(rest) != 3:
				return usagef("%s %s: want NAME KEY", cmd, rest[0])
			case rest[1] == "" || rest[2] == "":
				return usagef("%s %s: empty NAME or KEY", cmd, rest[0])
			}
			break
		}
		if cmd == "reset" {
			return usagef("reset: unknown kind %q (limiter)", strings.Join(rest[:min(len(rest), 1)], ""))
		}
		kinds = inspectKinds
		fallthrough
	case "force-unlock", "watch":
		switch {
		case len(rest) == 0:
			return usagef("%s: missing KIND and NAME", cmd)
		case !kinds[rest[0]]:
			return usagef("%s: unknown kind %q (%s)", cmd, rest[0], kindList(kinds))
		case len(rest) == 1:
			return usagef("%s %s: missing NAME", cmd, rest[0])
		case len(rest) > 2:
			return usagef("%s %s: one NAME only", cmd, rest[0])
		case rest[1] == "":
			return usagef("%s %s: empty NAME", cmd, rest[0])
		}
	default:
		return usagef("unknown command %q (inspect, list, force-unlock, reset, watch, requeue, purge)", cmd)
	}
	rdb, err := connect(cfg)
	if err != nil {
		return err
	}
	defer rdb.Close()
	c, err := redisson.New(rdb, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := ping(ctx, cfg, rdb); err != nil {
		return err
	}
	a := &app{cfg: cfg, c: c, stdin: stdin, stdout: stdout, stderr: stderr}
	switch cmd {
	case "list":
		pattern := "*"
		if len(rest) == 1 {
			pattern = rest[0]
		}
		return a.list(ctx, pattern)
	case "inspect":
		switch rest[0] {
		case "limiter":
			return a.inspectLimiter(ctx, rest[1], rest[2])
		case "idempotency":
			return a.inspectIdempotency(ctx, rest[1], rest[2])
		}
		return a.inspect(ctx, rest[0], rest[1])
	case "requeue":
		id := ""
		if len(rest) == 3 {
			id = rest[2]
		}
		return a.requeue(ctx, rest[1], id)
	case "purge":
		return a.purge(ctx, rest[1])
	case "reset":
		return a.resetLimiter(ctx, rest[1], rest[2])
	case "force-unlock":
		return a.forceUnlock(ctx, rest[0], rest[1])
	}
	return a.watch(ctx, rest[0], rest[1])
}

// ping checks Redis answers, for a one-line error naming where.
func ping(ctx context.Context, cfg config, rdb redis.UniversalClient) error {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		where := cfg.addr
		switch {
		case cfg.cluster != "":
			where = "cluster " + cfg.cluster
		case cfg.sentinel != "":
			where = "sentinel " + cfg.sentinel + " master " + cfg.master
		}
		return fmt.Errorf("redis at %s: %w", where, err)
	}
	return nil
}

func kindList(kinds map[string]bool) string {
	order := []string{"lock", "fairlock", "rwlock", "semaphore", "permits", "latch", "ratelimiter", "bucket", "map", "mapcache", "queue", "election",
		"reliablequeue", "deadletters", "reliabletopic", "scheduler"}
	var out []string
	for _, k := range order {
		if kinds[k] {
			out = append(out, k)
		}
	}
	return strings.Join(out, ", ")
}
