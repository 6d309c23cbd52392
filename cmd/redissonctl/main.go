// Command redissonctl inspects the distributed objects of redisson for Go
// and Java's Redisson in a Redis deployment: who holds a lock, for how long,
// who waits; semaphores, latches, rate limiters, buckets and maps; the keys
// of every object; and, when a holder is stuck, force-unlocks a lock.
//
// Usage:
//
//	redissonctl [flags] inspect lock|fairlock|rwlock|semaphore|permits|latch|ratelimiter|bucket|map|mapcache|queue NAME
//	redissonctl [flags] list [PATTERN]
//	redissonctl [flags] force-unlock lock|fairlock|rwlock NAME
//	redissonctl [flags] watch lock|fairlock|rwlock NAME
//
// Flags may come before or after the command. Run redissonctl -h for the
// flags and the exit codes: 0 ok, 1 error talking to Redis, 2 bad usage (also
// a key holding another kind of object), 3 not found or not held, 4
// force-unlock refused.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
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
	exitNotFound = 3 // the object does not exist, or the lock is not held
	exitRefused  = 4 // force-unlock not confirmed
)

const usageText = `usage: redissonctl [flags] COMMAND ...

Commands:
  inspect KIND NAME   one object's state; KIND is lock, fairlock, rwlock,
                      semaphore, permits (permit-expirable semaphore), latch,
                      ratelimiter, bucket, map, mapcache or queue
  list [PATTERN]      the keys of every object (SCAN MATCH PATTERN, default *)
                      on every master, with their kind and TTL
  force-unlock KIND NAME
                      delete a lock (lock, fairlock, rwlock) whoever holds it
                      and wake its waiters; asks for confirmation unless -yes
  watch KIND NAME     redraw a lock's holder, lease and queue every -interval

Exit codes:
  0  ok
  1  error talking to Redis
  2  bad usage (unknown command or kind, missing name, bad flag, a key
     holding another kind of object, or a value -codec cannot decode)
  3  not found (no such object) or not held (a free lock)
  4  force-unlock refused (not confirmed)

Flags (before or after the command):
`

// config is the command line.
type config struct {
	addr, cluster, sentinel, master string
	user, password                  string
	db                              int
	tls, tlsInsecure                bool
	tlsCA, tlsCert, tlsKey          string
	json, yes                       bool
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
var errRefused = errors.New("force-unlock refused")

// errNotHeld is a lock that is not held.
var errNotHeld = errors.New("not held")

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
	case errors.Is(err, redisson.ErrNotFound), errors.Is(err, errNotHeld):
		return exitNotFound
	case errors.Is(err, errRefused):
		return exitRefused
	}
	return exitRedis
}

// parse reads the flags, which may be interleaved with the command's words.
func parse(args []string, stdout io.Writer) (config, []string, error) {
	var cfg config
	fs := flag.NewFlagSet("redissonctl", flag.ContinueOnError)
	fs.StringVar(&cfg.addr, "redis", "127.0.0.1:6379", "Redis `host:port` (a single node)")
	fs.StringVar(&cfg.cluster, "cluster", "", "Redis Cluster seed nodes, comma-separated `host:port,...`")
	fs.StringVar(&cfg.sentinel, "sentinel", "", "Sentinel nodes, comma-separated `host:port,...` (with -master)")
	fs.StringVar(&cfg.master, "master", "", "the Sentinel master `name`")
	fs.StringVar(&cfg.user, "user", "", "ACL user name")
	fs.StringVar(&cfg.password, "a", "", "password (also -password; default $REDISCLI_AUTH)")
	fs.StringVar(&cfg.password, "password", "", "password (as -a)")
	fs.IntVar(&cfg.db, "db", 0, "database number (not on Cluster)")
	fs.BoolVar(&cfg.tls, "tls", false, "connect with TLS")
	fs.StringVar(&cfg.tlsCA, "tls-ca", "", "CA certificate `file` (PEM) to verify the server with")
	fs.StringVar(&cfg.tlsCert, "tls-cert", "", "client certificate `file` (PEM)")
	fs.StringVar(&cfg.tlsKey, "tls-key", "", "client key `file` (PEM)")
	fs.BoolVar(&cfg.tlsInsecure, "tls-insecure", false, "do not verify the server's certificate")
	fs.BoolVar(&cfg.json, "json", false, "print JSON (list: one object per line) for scripts; durations in nanoseconds")
	fs.DurationVar(&cfg.timeout, "timeout", 5*time.Second, "bound of each command (each refresh of watch)")
	fs.StringVar(&cfg.codec, "codec", "msgpack", "codec of bucket and map values: msgpack, json, string or bytes")
	fs.IntVar(&cfg.page, "page", 20, "map entries to show (inspect map)")
	fs.BoolVar(&cfg.yes, "yes", false, "force-unlock without asking")
	fs.DurationVar(&cfg.interval, "interval", time.Second, "refresh interval of watch")
	fs.IntVar(&cfg.count, "count", 0, "watch: stop after this many refreshes (0: until interrupted)")
	fs.SetOutput(io.Discard) // errors are ours to print, in one line
	fs.Usage = func() {}
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(stdout, usageText)
				fs.SetOutput(stdout)
				fs.PrintDefaults()
				return cfg, nil, err
			}
			return cfg, nil, usageError{err.Error()}
		}
		if fs.NArg() == 0 {
			break
		}
		words = append(words, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if cfg.password == "" {
		cfg.password = os.Getenv("REDISCLI_AUTH")
	}
	switch {
	case cfg.timeout <= 0:
		return cfg, nil, usagef("-timeout must be positive")
	case cfg.interval <= 0:
		return cfg, nil, usagef("-interval must be positive")
	case cfg.count < 0:
		return cfg, nil, usagef("-count must not be negative")
	case cfg.page < 1:
		return cfg, nil, usagef("-page must be at least 1")
	case cfg.cluster != "" && cfg.sentinel != "":
		return cfg, nil, usagef("-cluster and -sentinel exclude each other")
	case cfg.sentinel != "" && cfg.master == "":
		return cfg, nil, usagef("-sentinel needs -master")
	case cfg.cluster != "" && cfg.db != 0:
		return cfg, nil, usagef("-db is not available on Redis Cluster")
	}
	if _, err := codecOf(cfg.codec); err != nil {
		return cfg, nil, err
	}
	return cfg, words, nil
}

// codecOf is the codec -codec names.
func codecOf(name string) (redisson.Codec, error) {
	switch name {
	case "msgpack":
		return redisson.MsgpackCodec{}, nil
	case "json":
		return redisson.JSONCodec{}, nil
	case "string":
		return redisson.StringCodec{}, nil
	case "bytes":
		return redisson.BytesCodec{}, nil
	}
	return nil, usagef("unknown codec %q (msgpack, json, string or bytes)", name)
}

// connect builds the go-redis client the flags describe.
func connect(cfg config) (redis.UniversalClient, error) {
	tc, err := tlsConfig(cfg)
	if err != nil {
		return nil, err
	}
	split := func(s string) []string { return strings.Split(s, ",") }
	switch {
	case cfg.cluster != "":
		return redis.NewClusterClient(&redis.ClusterOptions{
			Addrs: split(cfg.cluster), Username: cfg.user, Password: cfg.password, TLSConfig: tc,
			DialTimeout: cfg.timeout, MaxRetries: 1,
		}), nil
	case cfg.sentinel != "":
		return redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: cfg.master, SentinelAddrs: split(cfg.sentinel), Username: cfg.user, Password: cfg.password,
			DB: cfg.db, TLSConfig: tc, DialTimeout: cfg.timeout, MaxRetries: 1,
		}), nil
	}
	return redis.NewClient(&redis.Options{
		Addr: cfg.addr, Username: cfg.user, Password: cfg.password, DB: cfg.db, TLSConfig: tc,
		DialTimeout: cfg.timeout, MaxRetries: 1,
	}), nil
}

// tlsConfig is the TLS configuration of the -tls flags; nil without TLS.
func tlsConfig(cfg config) (*tls.Config, error) {
	if !cfg.tls && cfg.tlsCA == "" && cfg.tlsCert == "" && !cfg.tlsInsecure {
		return nil, nil
	}
	tc := &tls.Config{InsecureSkipVerify: cfg.tlsInsecure, MinVersion: tls.VersionTLS12} //nolint:gosec // asked for with -tls-insecure
	if cfg.tlsCA != "" {
		pem, err := os.ReadFile(cfg.tlsCA)
		if err != nil {
			return nil, usagef("-tls-ca: %v", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, usagef("-tls-ca: no PEM certificate in %s", cfg.tlsCA)
		}
	}
	if cfg.tlsCert != "" || cfg.tlsKey != "" {
		cert, err := tls.LoadX509KeyPair(cfg.tlsCert, cfg.tlsKey)
		if err != nil {
			return nil, usagef("-tls-cert/-tls-key: %v", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// lockKinds are the kinds force-unlock and watch accept.
var lockKinds = map[string]bool{"lock": true, "fairlock": true, "rwlock": true}

// inspectKinds are the kinds inspect accepts.
var inspectKinds = map[string]bool{"lock": true, "fairlock": true, "rwlock": true, "semaphore": true,
	"permits": true, "latch": true, "ratelimiter": true, "bucket": true, "map": true,
	"mapcache": true, "queue": true}

// dispatch checks the command's words, connects and runs it.
func dispatch(cfg config, words []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(words) == 0 {
		return usagef("no command (inspect, list, force-unlock, watch; -h for help)")
	}
	cmd, rest := words[0], words[1:]
	kinds := lockKinds
	switch cmd {
	case "list":
		if len(rest) > 1 {
			return usagef("list takes at most one PATTERN")
		}
	case "inspect":
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
		return usagef("unknown command %q (inspect, list, force-unlock, watch)", cmd)
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
		return a.inspect(ctx, rest[0], rest[1])
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
	order := []string{"lock", "fairlock", "rwlock", "semaphore", "permits", "latch", "ratelimiter", "bucket", "map", "mapcache", "queue"}
	var out []string
	for _, k := range order {
		if kinds[k] {
			out = append(out, k)
		}
	}
	return strings.Join(out, ", ")
}
