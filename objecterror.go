package redisson

import (
	"fmt"
	"strconv"
	"strings"
)

// The one shape of an object's errors: `redisson: <kind> "<name>": <cause>`.
// Every object builds its errors with objectErr (a failed call to Redis) or
// objectErrorf (a condition of its own, wrapping a sentinel with %w); both
// match their cause with errors.Is and errors.As.

// objectError is an error of one object's call.
type objectError struct {
	kind, name string
	cause      error
}

func (e *objectError) Error() string {
	// The cause's own package prefix is not repeated.
	return objectMessage(e.kind, e.name, strings.TrimPrefix(e.cause.Error(), "redisson: "))
}

// objectMessage is the one shape of an object's error text.
func objectMessage(kind, name, cause string) string {
	return "redisson: " + kind + " " + strconv.Quote(name) + ": " + cause
}

func (e *objectError) Unwrap() error { return e.cause }

// namedError is objectError for code that knows its object as text (`kind
// "name"`, as the codecs do) rather than by kind and name.
type namedError struct {
	object string
	cause  error
}

func (e *namedError) Error() string {
	return "redisson: " + e.object + ": " + strings.TrimPrefix(e.cause.Error(), "redisson: ")
}

func (e *namedError) Unwrap() error { return e.cause }

// objectErrorf returns an error of the object's own, the format (with its
// arguments) following the object's name.
func objectErrorf(kind, name, format string, args ...any) error {
	return &objectError{kind: kind, name: name, cause: fmt.Errorf(format, args...)}
}

// wrongTypeError keeps the Redis reply and matches ErrWrongType. Its text
// is the sentinel's alone: the reply of a script names the script's SHA
// and line (`script: f_<sha>, on @user_script:12.`, or Redis 6's `Error
// running script (call to f_<sha>)`), which say nothing to the caller.
type wrongTypeError struct{ err error }

func (e *wrongTypeError) Error() string { return ErrWrongType.Error() }

func (e *wrongTypeError) Is(target error) bool { return target == ErrWrongType }

func (e *wrongTypeError) Unwrap() error { return e.err }

func isWrongType(err error) bool { return strings.Contains(err.Error(), "WRONGTYPE") }

// invalidOption is the one error of an option or argument out of range: it
// matches sentinel (ErrInvalidOption, or the object's own, such as
// ErrInvalidRate) and reads `<sentinel>: <field> <value>, want <rule>`.
// An object names itself in it with objectErr, New's options do not.
func invalidOption(sentinel error, field string, value any, rule string) error {
	return fmt.Errorf("%w: %s %v, want %s", sentinel, field, value, rule)
}
