package redisson

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// base is what every object shares: its identity (the client, its kind
// and name), the checks every call makes before it sends anything, the
// shape of its errors, its codec, and the opening of an observed call.
// Each object type embeds it; an object whose checks or errors differ (a
// semaphore's permit count, an integer key's replies) keeps its own method
// beside the embedded one. It holds no pointer back to the object, and
// nothing in it changes after the object's constructor.
type base struct {
	c       *Client
	kind    string // as errors name it: "bucket", "sorted set", "map cache"
	opKind  string // as an Observer sees it: kind, except a MapCache's "map_cache"
	name    string
	object  string // `kind "name"`, as codec errors name the object
	codec   Codec  // nil for objects that store no values
	badName error  // from nameError: the name cannot work on this topology
}

// newBase returns the identity of the object kind called name; keys are
// the other keys the object uses, which must share name's cluster slot.
func newBase(c *Client, kind, name string, codec Codec, keys ...string) base {
	return base{
		c:       c,
		kind:    kind,
		opKind:  kind,
		name:    name,
		object:  fmt.Sprintf("%s %q", kind, name),
		codec:   codec,
		badName: c.nameError(kind, name, keys...),
	}
}

// check is the precondition of every call: a usable name and an open
// client.
func (o *base) check() error { return o.c.checkObject(o.name, o.badName) }

// begin starts observing one of the object's operations (observe.go), for a
// call that checks its input itself.
func (o *base) begin(ctx context.Context, op string) (context.Context, *opRecord) {
	return o.c.begin(ctx, o.opKind, o.name, op)
}

// open is the opening of a call: it begins observing op and checks the
// object. err is assigned to the call's named result, which the deferred
// end reads, so that the Observer sees a refused call end with its error:
//
//	ctx, rec, err := o.open(ctx, op)
//	defer func() { rec.end(err, OutcomeOK) }()
//	if err != nil {
//		return err
//	}
func (o *base) open(ctx context.Context, op string) (context.Context, *opRecord, error) {
	ctx, rec := o.begin(ctx, op)
	return ctx, rec, o.check()
}

// reject reports op refused (bad input, a closed client) by a call that
// begins observing only once its input is checked: Lock.Do, an iterator's
// pages.
func (o *base) reject(ctx context.Context, op string, err error) {
	o.c.reject(ctx, o.opKind, o.name, op, err)
}

// wrap names the object in a Redis error; WRONGTYPE matches ErrWrongType.
func (o *base) wrap(err error) error { return objectErr(o.kind, o.name, err) }

// errorf returns an error in the one shape, naming the object.
func (o *base) errorf(format string, args ...any) error {
	return objectErrorf(o.kind, o.name, format, args...)
}

// encode encodes one value with the object's codec; nil pointers are
// ErrNilValue, as Redisson stores no nulls.
func (o *base) encode(v any) ([]byte, error) { return encodeNonNil(o.codec, o.object, v) }

// decodeOne turns a bulk-string reply (or redis.Nil) into (value, present),
// decoded with o's codec.
func decodeOne[T any](o *base, s string, err error) (T, bool, error) {
	var zero T
	if errors.Is(err, redis.Nil) {
		return zero, false, nil
	}
	if err != nil {
		return zero, false, o.wrap(err)
	}
	v, err := decodeValue[T](o.codec, o.object, []byte(s))
	if err != nil {
		return zero, false, err
	}
	return v, true, nil
}

// decodeReply is decodeOne for a reply of any type (a script's): nil is
// absent, a bulk string is decoded, anything else is ErrUnexpectedReply.
func decodeReply[T any](o *base, v any, err error) (T, bool, error) {
	if err == nil && v == nil {
		err = redis.Nil
	}
	s, ok := v.(string)
	if !ok && err == nil {
		var zero T
		return zero, false, o.errorf("%w: reply %T", ErrUnexpectedReply, v)
	}
	return decodeOne[T](o, s, err)
}
