package redisson

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// What List, Set and SortedSet share: the object's identity and checks,
// the decoding of element replies, score arguments, and their iterators'
// pager.

// collection is the identity of one List, Set or SortedSet.
type collection struct {
	c       *Client
	kind    string // "list", "set", "sorted set"
	name    string
	object  string // `list "name"`, for codec errors
	codec   Codec
	badName error
}

func newCollection(c *Client, kind, name string, opts []ObjectOption) collection {
	return collection{
		c:       c,
		kind:    kind,
		name:    name,
		object:  fmt.Sprintf("%s %q", kind, name),
		codec:   c.objectCodec(opts),
		badName: c.nameError(kind, name),
	}
}

func (o *collection) check() error { return o.c.checkObject(o.name, o.badName) }

// begin starts observing one of the collection's operations (observe.go).
func (o *collection) begin(ctx context.Context, op string) (context.Context, *opRecord) {
	return o.c.begin(ctx, o.kind, o.name, op)
}

func (o *collection) wrap(err error) error { return objectErr(o.kind, o.name, err) }

func (o *collection) errorf(format string, args ...any) error {
	return objectErrorf(o.kind, o.name, format, args...)
}

// encode encodes one element; nil pointers are ErrNilValue, as Redisson
// stores no nulls.
func (o *collection) encode(v any) (string, error) {
	b, err := encodeNonNil(o.codec, o.object, v)
	return string(b), err
}

// encodeAll encodes elements as command arguments.
func encodeAll[T any](o *collection, vs []T) ([]any, error) {
	args := make([]any, len(vs))
	for i, v := range vs {
		b, err := o.encode(v)
		if err != nil {
			return nil, err
		}
		args[i] = b
	}
	return args, nil
}

// checkCount refuses a negative count of elements.
func (o *collection) checkCount(n int64) error {
	if n < 0 {
		return o.errorf("%w: %d", ErrNegativeCount, n)
	}
	return nil
}

// decodeAll decodes the elements of a reply.
func decodeAll[T any](o *collection, ss []string) ([]T, error) {
	out := make([]T, len(ss))
	for i, s := range ss {
		v, err := decodeValue[T](o.codec, o.object, []byte(s))
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// decodeOne turns a bulk-string reply (or nil) into (element, present).
func decodeOne[T any](o *collection, s string, err error) (T, bool, error) {
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

// scriptErr maps the refusals of the collections' scripts to their
// sentinels: REDISSON_INDEX is an index out of range.
func (o *collection) scriptErr(err error) error {
	if err != nil && strings.HasPrefix(err.Error(), "REDISSON_INDEX") {
		return o.errorf("%w", ErrIndexOutOfRange)
	}
	return o.wrap(err)
}

// scoreArg formats a score as Redisson sends one: Java's Double.toString
// ("1.5", "2.0", "1.0E21"), with "+inf" and "-inf" for the infinities.
// NaN is ErrInvalidScore: Redis refuses it.
func (o *collection) scoreArg(f float64) (string, error) {
	switch {
	case math.IsNaN(f):
		return "", o.errorf("%w: NaN", ErrInvalidScore)
	case math.IsInf(f, 1):
		return "+inf", nil
	case math.IsInf(f, -1):
		return "-inf", nil
	}
	return javaDouble(f), nil
}

// javaDouble is Java's Double.toString of a finite f: plain decimal for
// 1e-3 <= |f| < 1e7, else d.dddE<exp>, always with a digit after the
// point. Both sides print the shortest digits that read back as f.
func javaDouble(f float64) string {
	if a := math.Abs(f); a == 0 || (a >= 1e-3 && a < 1e7) {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // 1.2345e+07
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	n, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(n)
}

// pager pages one of the collection's iterators, each page an operation op
// (pager.go).
func (o *collection) pager(op string, batch int) *pager {
	return &pager{c: o.c, kind: o.kind, opKind: o.kind, name: o.name, op: op, batch: batch, check: o.check, wrap: o.wrap}
}
