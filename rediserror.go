package redisson

import (
	"context"
	"errors"
	"net"
	"strings"

	"github.com/redis/go-redis/v9"
)

// redisError is a failure of Redis (or of reaching it) that this package
// recognised: its text is the one clear sentence of its class, it matches
// the class's sentinel (ErrAuth, ErrUnreachable, ErrUnsupported), and the
// original error stays reachable through errors.Unwrap and errors.As for
// debugging.
type redisError struct {
	sentinel error  // the class
	text     string // what is said, after the sentinel's own text
	err      error  // the original error
}

func (e *redisError) Error() string {
	if e.text == "" {
		return e.sentinel.Error()
	}
	return e.sentinel.Error() + ": " + e.text
}

func (e *redisError) Is(target error) bool { return target == e.sentinel }

func (e *redisError) Unwrap() error { return e.err }

// classify is the one classifier of errors from Redis: every error that
// becomes an object's (objectErr, intKeyErr) or the Client's (Ping,
// Capabilities) goes through it, so that the same cause gives the same
// sentinel whatever the object or call. It returns err unchanged when err
// is nil, already classified, the client's or the context's, or of no
// class it knows.
//
//   - ErrAuth: a wrong or missing password or user (NOAUTH, WRONGPASS,
//     "invalid password", the "unauthenticated" protocol error Redis gives
//     a long command on an unauthenticated connection), and a command the
//     user's ACL does not permit (NOPERM).
//   - ErrUnreachable: no connection could be made (the dial was refused or
//     timed out, no Sentinel answered). A call whose connection failed once
//     sent (a timeout or reset while in flight) is not unreachable: it may
//     have run, and keeps its own error.
//   - ErrUnsupported: the server lacks a command or subcommand (unknown or
//     renamed away); the error names it.
//   - ErrWrongType: WRONGTYPE, without the script's SHA and line.
func classify(err error) error {
	var done *redisError
	var wrong *wrongTypeError
	switch {
	case err == nil || errors.As(err, &done) || errors.As(err, &wrong) ||
		errors.Is(err, ErrClientClosed) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return err
	case isDialError(err):
		return &redisError{sentinel: ErrUnreachable, text: dialText(err), err: err}
	}
	var reply redis.Error
	if !errors.As(err, &reply) {
		return err
	}
	msg := reply.Error()
	switch {
	case isWrongType(err):
		return &wrongTypeError{err: err}
	case isAuthReply(msg):
		return &redisError{sentinel: ErrAuth, text: authText(msg), err: err}
	}
	if cmd, ok := unknownCommand(msg); ok {
		return &redisError{sentinel: ErrUnsupported, text: cmd, err: err}
	}
	return err
}

// isDialError reports whether err says no connection could be made, so
// that nothing was sent: a refused or timed-out dial, or no Sentinel
// answering the question of which node is the master.
func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns) || strings.Contains(err.Error(), "all sentinels specified in configuration are unreachable")
}

// dialText is the address that could not be reached, when err names one.
func dialText(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Addr != nil {
		if op.Timeout() {
			return "dial " + op.Addr.String() + ": timeout"
		}
		return "dial " + op.Addr.String() + ": " + op.Err.Error()
	}
	return err.Error()
}

// isAuthReply reports an error reply refusing the connection's identity.
func isAuthReply(msg string) bool {
	for _, p := range []string{"NOAUTH", "WRONGPASS", "NOPERM"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return strings.Contains(msg, "Protocol error: unauthenticated") ||
		strings.Contains(msg, "invalid password") ||
		strings.Contains(msg, "invalid username-password pair") ||
		strings.Contains(msg, "called without any password configured")
}

// authText says which of the auth refusals it was, without the noise of
// the protocol error's wording.
func authText(msg string) string {
	switch {
	case strings.HasPrefix(msg, "NOPERM"):
		return "not permitted by the user's ACL: " + msg
	case strings.HasPrefix(msg, "NOAUTH"), strings.Contains(msg, "Protocol error: unauthenticated"):
		return "not authenticated (missing or wrong password)"
	case strings.Contains(msg, "called without any password configured"):
		return "a password was given but the server has none"
	}
	return "wrong username or password"
}

// unknownCommand reports a reply saying the server has no such command or
// subcommand, and names it: "ERR unknown command 'blmove', with args
// beginning with: ..." (Redis 6.0 quotes with backticks), "ERR unknown
// subcommand 'no-evict'. Try CLIENT HELP.", and from a script, "ERR Unknown
// Redis command called from script".
func unknownCommand(msg string) (string, bool) {
	lower := strings.ToLower(msg)
	for _, what := range []string{"command", "subcommand"} {
		i := strings.Index(lower, "unknown "+what+" ")
		if i < 0 {
			continue
		}
		rest := msg[i+len("unknown "+what+" "):]
		if rest == "" || (rest[0] != '\'' && rest[0] != '`') {
			continue
		}
		name, _, _ := strings.Cut(rest[1:], rest[:1])
		return "the server lacks " + what + " " + strings.ToUpper(name), true
	}
	if strings.Contains(lower, "unknown redis command called from script") {
		return "the server lacks a command a script calls", true
	}
	return "", false
}

// unsupported is the error of a call that needs cmd, which the server
// lacks (Capabilities says so): it matches ErrUnsupported and names cmd.
func unsupported(cmd, why string) error {
	return &redisError{sentinel: ErrUnsupported, text: "the server lacks command " + strings.ToUpper(cmd) + " (" + why + ")"}
}

// objectErr names the object in err, the error of a call on it. nil and
// ErrClientClosed pass unchanged (the client's state, not the object's), an
// error that already names an object is kept, and a Redis error goes
// through the one classifier (classify: ErrAuth, ErrUnreachable,
// ErrUnsupported, ErrWrongType).
func objectErr(kind, name string, err error) error {
	if err == nil {
		return nil // before the targets below, which escape to the heap
	}
	var named *objectError
	var text *namedError
	if err == nil || errors.Is(err, ErrClientClosed) || errors.As(err, &named) || errors.As(err, &text) {
		return err
	}
	return &objectError{kind: kind, name: name, cause: classify(err)}
}

// intKeyErr is objectErr for objects whose state is one integer key
// (Semaphore, CountDownLatch, AtomicLong, IdGenerator): a reply saying the
// key holds a string that is no integer matches ErrWrongType too, and
// Redis refusing an increment that would overflow matches ErrInvalidPermits.
func intKeyErr(kind, name string, err error) error {
	switch {
	case err == nil || errors.Is(err, ErrClientClosed):
		return err
	case strings.Contains(err.Error(), "not an integer"):
		return &objectError{kind: kind, name: name, cause: &wrongTypeError{err: err}}
	case overflows(err):
		return &objectError{kind: kind, name: name, cause: &redisError{sentinel: ErrInvalidPermits, text: "the count would overflow", err: err}}
	}
	return objectErr(kind, name, err)
}

// overflows reports whether err is Redis refusing an INCRBY whose result
// would not fit in 64 bits (nothing was written: the script stops there).
func overflows(err error) bool {
	return strings.Contains(err.Error(), "increment or decrement would overflow")
}
