package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// parse reads the flags, which may be interleaved with the command's words.
func parse(args []string, stdout io.Writer) (config, []string, error) {
	var cfg config
	var host, uri string
	var port int
	fs := flag.NewFlagSet("redissonctl", flag.ContinueOnError)
	fs.StringVar(&cfg.addr, "redis", "", "Redis `host:port` (a single node; default 127.0.0.1:6379)")
	fs.StringVar(&host, "h", "", "server `host`name, as redis-cli's -h (default 127.0.0.1); -h alone prints this help")
	fs.IntVar(&port, "p", 0, "server `port`, as redis-cli's -p (default 6379)")
	fs.StringVar(&uri, "u", "", "server `URI` redis[s]://[[user]:password@]host[:port][/db], as redis-cli's -u; it overrides -h, -p, -a, -n, -user and -redis")
	fs.IntVar(&cfg.db, "n", 0, "database number (as -db)")
	fs.StringVar(&cfg.cluster, "cluster", "", "Redis Cluster seed nodes, comma-separated `host:port,...`")
	fs.StringVar(&cfg.sentinel, "sentinel", "", "Sentinel nodes, comma-separated `host:port,...` (with -master)")
	fs.StringVar(&cfg.master, "master", "", "the Sentinel master `name`")
	fs.StringVar(&cfg.user, "user", "", "ACL user name")
	fs.StringVar(&cfg.password, "a", "", "password (also -password; default $REDISCLI_AUTH)")
	fs.StringVar(&cfg.password, "password", "", "password (as -a)")
	fs.IntVar(&cfg.db, "db", 0, "database number (not on Cluster; also -n)")
	fs.BoolVar(&cfg.tls, "tls", false, "connect with TLS")
	fs.StringVar(&cfg.tlsCA, "tls-ca", "", "CA certificate `file` (PEM) to verify the server with")
	fs.StringVar(&cfg.tlsCert, "tls-cert", "", "client certificate `file` (PEM)")
	fs.StringVar(&cfg.tlsKey, "tls-key", "", "client key `file` (PEM)")
	fs.BoolVar(&cfg.tlsInsecure, "tls-insecure", false, "do not verify the server's certificate")
	fs.BoolVar(&cfg.json, "json", false, "print JSON (list: one object per line) for scripts; durations in nanoseconds")
	fs.DurationVar(&cfg.timeout, "timeout", 5*time.Second, "bound of each command (each refresh of watch)")
	fs.StringVar(&cfg.codec, "codec", "msgpack", "codec of bucket, map and queue values: msgpack, json, string or bytes")
	fs.BoolVar(&cfg.raw, "raw", false, "show bucket, map and queue values as stored, undecoded, as quoted strings (not JSON)")
	fs.Int64Var(&cfg.limit, "limit", 0, "inspect limiter: the limiter's limit (fixed window) or rate (GCRA), to show the permits remaining")
	fs.DurationVar(&cfg.window, "window", 0, "inspect limiter: the limiter's window (fixed window) or period (GCRA)")
	fs.Int64Var(&cfg.burst, "burst", 0, "inspect limiter: a GCRA limiter's burst (default -limit)")
	fs.IntVar(&cfg.page, "page", 20, "map entries (inspect map) and dead letters (inspect deadletters) to show")
	fs.DurationVar(&cfg.lease, "lease", 30*time.Second, "inspect reliablequeue: the workers' WorkerOptions.Lease, to show each job's lease left")
	fs.StringVar(&cfg.scope, "scope", "", "inspect idempotency: the scope the middleware's Scope gave the request (default none)")
	fs.BoolVar(&cfg.yes, "yes", false, "force-unlock, reset, requeue and purge without asking")
	fs.DurationVar(&cfg.interval, "interval", time.Second, "refresh interval of watch")
	fs.IntVar(&cfg.count, "count", 0, "watch: stop after this many refreshes (0: until interrupted)")
	fs.SetOutput(io.Discard) // errors are ours to print, in one line
	fs.Usage = func() {}
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			// -h is the host, as in redis-cli; alone (no value) it still
			// prints the help, as it did before it took a host.
			if errors.Is(err, flag.ErrHelp) || err.Error() == "flag needs an argument: -h" {
				fmt.Fprint(stdout, usageText)
				fs.SetOutput(stdout)
				fs.PrintDefaults()
				return cfg, nil, flag.ErrHelp
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
	if err := address(&cfg, host, port, uri); err != nil {
		return cfg, nil, err
	}
	switch {
	case cfg.timeout <= 0:
		return cfg, nil, usagef("-timeout must be positive")
	case cfg.interval <= 0:
		return cfg, nil, usagef("-interval must be positive")
	case cfg.count < 0:
		return cfg, nil, usagef("-count must not be negative")
	case cfg.lease <= 0:
		return cfg, nil, usagef("-lease must be positive")
	case cfg.page < 1:
		return cfg, nil, usagef("-page must be at least 1")
	case cfg.cluster != "" && cfg.sentinel != "":
		return cfg, nil, usagef("-cluster and -sentinel exclude each other")
	case cfg.sentinel != "" && cfg.master == "":
		return cfg, nil, usagef("-sentinel needs -master")
	case cfg.cluster != "" && cfg.db != 0:
		return cfg, nil, usagef("-db is not available on Redis Cluster")
	case cfg.limit < 0 || cfg.burst < 0 || cfg.window < 0:
		return cfg, nil, usagef("-limit, -burst and -window must not be negative")
	case (cfg.limit > 0) != (cfg.window > 0):
		return cfg, nil, usagef("-limit and -window go together")
	case cfg.burst > 0 && cfg.limit == 0:
		return cfg, nil, usagef("-burst needs -limit and -window")
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

// address sets cfg.addr (and, from a URI, the user, password, database and
// TLS) from -redis, redis-cli's -h and -p, and -u, which overrides them
// all whatever the order (redis-cli applies its flags left to right; here
// a URI always wins). -h/-p and -redis exclude each other, and none of them
// goes with -cluster or -sentinel.
func address(cfg *config, host string, port int, uri string) error {
	single := cfg.addr != "" || host != "" || port != 0 || uri != ""
	switch {
	case single && (cfg.cluster != "" || cfg.sentinel != ""):
		return usagef("-redis, -h, -p and -u name a single node: not with -cluster or -sentinel")
	case cfg.addr != "" && (host != "" || port != 0) && uri == "":
		return usagef("-redis and -h/-p exclude each other")
	case port < 0 || port > 65535:
		return usagef("-p %d: not a port", port)
	}
	if uri != "" {
		return parseURI(cfg, uri)
	}
	if cfg.addr != "" {
		return nil
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if port == 0 {
		port = 6379
	}
	cfg.addr = net.JoinHostPort(host, strconv.Itoa(port))
	return nil
}

// parseURI reads a redis-cli URI: redis:// or rediss:// (TLS),
// [[user]:password@] (a userinfo without a colon is a password, as
// redis-cli reads it), host[:port] (default 6379) and an optional /db.
func parseURI(cfg *config, uri string) error {
	u, err := url.Parse(uri)
	if err != nil {
		return usagef("-u: %v", err)
	}
	switch u.Scheme {
	case "redis":
	case "rediss":
		cfg.tls = true
	default:
		return usagef("-u %q: the scheme must be redis:// or rediss://", uri)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return usagef("-u %q: query parameters are not supported", uri)
	}
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			cfg.user, cfg.password = u.User.Username(), p
		} else {
			cfg.user, cfg.password = "", u.User.Username()
		}
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = "6379"
	}
	cfg.addr = net.JoinHostPort(host, port)
	cfg.db = 0
	if db := strings.Trim(u.Path, "/"); db != "" {
		n, err := strconv.Atoi(db)
		if err != nil || n < 0 {
			return usagef("-u %q: database %q is not a number", uri, db)
		}
		cfg.db = n
	}
	return nil
}
