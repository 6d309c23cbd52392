package redisson

import (
	"math"
	"strconv"
	"strings"
)

// What List, Set and SortedSet share beyond the object base (base.go):
// the decoding of element replies and score arguments; their iterators
// page through the base's pager (pager.go).

// collection is the base of a List, Set or SortedSet: the object's
// identity (base.go) and what only collections do.
type collection struct {
	base
}

func newCollection(c *Client, kind, name string, opts []ObjectOption) collection {
	return collection{newBase(c, kind, name, c.objectCodec(opts))}
}

// encode encodes one element as a command argument; nil pointers are
// ErrNilValue, as Redisson stores no nulls.
func (o *collection) encode(v any) (string, error) {
	b, err := o.base.encode(v)
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
