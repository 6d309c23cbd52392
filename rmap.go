package redisson

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

const mapKind = "map"

// Map is a map from K to V stored in a Redis hash, wire-compatible with
// Redisson's RMap: the hash is at the map's name, each field is a key
// encoded with the map's codec and each value the value encoded with it
// (Options.Codec unless WithCodec says otherwise). The codec must encode
// equal keys to equal bytes; MsgpackCodec, JSONCodec and StringCodec do for
// plain keys (strings, integers, booleans).
//
// A stored key or value that does not decode is an error matching ErrCodec
// that names the map and the codec, never a zero value. A key holding
// another Redis type is ErrWrongType and every write leaves it unchanged.
// Nil pointer keys and values are ErrNilValue, as Redisson refuses nulls.
//
// A Map is safe for concurrent use and holds no state of its own.
type Map[K comparable, V any] struct {
	base        // kind: mapKind, or mapCacheKind for a MapCache's
	cached bool // WithClientSideCaching (GetMap only)
}

// GetMap returns the map called name, from keys of type K to values of type
// V. It does no I/O. opts may give the map its own codec (WithCodec); a nil
// option or a nil codec keeps the client's default; WithClientSideCaching
// serves Get, GetAll and ContainsKey from a cache Redis keeps fresh (see
// its guarantees; any write of the hash drops all its cached entries). An empty name makes every
// method return ErrEmptyName.
//
// Methods cannot have type parameters in Go, so this factory is a function
// rather than a method of Client.
func GetMap[K comparable, V any](c *Client, name string, opts ...ObjectOption) *Map[K, V] {
	m := newMap[K, V](c, mapKind, name, opts)
	m.cached = objectOptionsOf(opts).sideCache
	return m
}

// newMap builds a Map of the kind given (its errors name it); keys are the
// object's other keys, which must share name's cluster slot. An Observer
// sees the kind with underscores: map, map_cache.
func newMap[K comparable, V any](c *Client, kind, name string, opts []ObjectOption, keys ...string) *Map[K, V] {
	b := newBase(c, kind, name, c.objectCodec(opts), keys...)
	b.opKind = strings.ReplaceAll(kind, " ", "_")
	return &Map[K, V]{base: b}
}

// write marks a write of the map for its client-side cache, if it has one;
// the returned function ends it.
func (m *Map[K, V]) write() func() {
	if !m.cached {
		return func() {}
	}
	return cacheWrite(m.c.clientCache(), m.name)
}

// Name returns the map's name, the Redis key of its hash.
func (m *Map[K, V]) Name() string { return m.name }

// Codec returns the codec the map encodes its keys and values with.
func (m *Map[K, V]) Codec() Codec { return m.codec }

// encodeKey encodes a key; a float key -0 is encoded as 0, the key Go's ==
// (and so ReadAll's map) takes it to be, so the two never become two fields.
func (m *Map[K, V]) encodeKey(key K) ([]byte, error) {
	if rv := reflect.ValueOf(&key).Elem(); rv.CanFloat() && rv.Float() == 0 {
		rv.SetFloat(0)
	}
	return m.encode(key)
}

// value turns a reply (a bulk string or nil) into (value, present).
func (m *Map[K, V]) value(v any, err error) (V, bool, error) { return decodeReply[V](&m.base, v, err) }

// Get returns the value at key and true, or the zero value and false when
// key is absent. It returns ErrNilValue for a nil pointer key, ErrCodec when
// the key does not encode or the stored value does not decode; ErrEmptyName,
// ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis error otherwise.
func (m *Map[K, V]) Get(ctx context.Context, key K) (_ V, _ bool, err error) {
	ctx, rec, err := m.open(ctx, opMapGet)
	defer func() { rec.end(err, OutcomeOK) }()
	var zero V
	if err != nil {
		return zero, false, err
	}
	k, err := m.encodeKey(key)
	if err != nil {
		return zero, false, err
	}
	if m.cached {
		if tc := m.c.clientCache(); tc != nil {
			return cachedGet[V](ctx, &m.base, tc, string(k))
		}
	}
	m.c.trip(ctx, 1)
	v, err := m.c.rdb.HGet(ctx, m.name, string(k)).Result()
	return m.value(v, err)
}

// Put stores v at key and returns the previous value and true, or the zero
// value and false when key was absent. When the previous bytes do not decode,
// v is stored all the same and the error matches ErrCodec. It returns
// ErrNilValue for a nil pointer key or value, ErrCodec when either does not
// encode; ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a
// Redis error otherwise.
func (m *Map[K, V]) Put(ctx context.Context, key K, v V) (_ V, _ bool, err error) {
	ctx, rec := m.begin(ctx, opMapPut)
	defer func() { rec.end(err, OutcomeOK) }()
	return m.put(ctx, scriptMapPut, key, v)
}

// PutIfAbsent stores v at key when key is absent. It returns the present
// value and true (loaded) when key was present, leaving it in place, or the
// zero value and false when it stored v, like sync.Map's LoadOrStore
// reversed. It returns the errors of Put.
func (m *Map[K, V]) PutIfAbsent(ctx context.Context, key K, v V) (_ V, _ bool, err error) {
	ctx, rec := m.begin(ctx, opMapPutIfAbsent)
	defer func() { rec.end(err, OutcomeOK) }()
	return m.put(ctx, scriptMapPutIfAbsent, key, v)
}

func (m *Map[K, V]) put(ctx context.Context, s *script, key K, v V) (V, bool, error) {
	var zero V
	if err := m.check(); err != nil {
		return zero, false, err
	}
	k, val, err := m.entryArgs(key, v)
	if err != nil {
		return zero, false, err
	}
	defer m.write()()
	return m.value(m.c.scripts.run(ctx, s, []string{m.name}, k, val).Result())
}

// entryArgs encodes key and v as a command's field and value; Put and a
// Batch's Put and FastPut share it.
func (m *Map[K, V]) entryArgs(key K, v V) (k, val []byte, err error) {
	if k, err = m.encodeKey(key); err != nil {
		return nil, nil, err
	}
	if val, err = m.encode(v); err != nil {
		return nil, nil, err
	}
	return k, val, nil
}

// Remove deletes key and returns its value and true, or the zero value and
// false when it was absent. When the bytes do not decode the entry is
// removed all the same and the error matches ErrCodec. It returns the errors
// of Get.
func (m *Map[K, V]) Remove(ctx context.Context, key K) (_ V, _ bool, err error) {
	ctx, rec, err := m.open(ctx, opMapRemove)
	defer func() { rec.end(err, OutcomeOK) }()
	var zero V
	if err != nil {
		return zero, false, err
	}
	k, err := m.encodeKey(key)
	if err != nil {
		return zero, false, err
	}
	defer m.write()()
	return m.value(m.c.scripts.run(ctx, scriptMapRemove, []string{m.name}, k).Result())
}

// FastPut stores v at key without reading the previous value, and reports
// whether key was new (Redisson's fastPut, one HSET). It returns the errors
// of Put.
func (m *Map[K, V]) FastPut(ctx context.Context, key K, v V) (_ bool, err error) {
	ctx, rec, err := m.open(ctx, opMapFastPut)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	k, val, err := m.entryArgs(key, v)
	if err != nil {
		return false, err
	}
	defer m.write()()
	m.c.trip(ctx, 1)
	n, err := m.c.rdb.HSet(ctx, m.name, string(k), val).Result()
	return n == 1, m.wrap(err)
}

// FastRemove deletes keys without reading their values and returns how many
// were present (Redisson's fastRemove, one HDEL). No keys is no call and 0.
// It returns ErrNilValue or ErrCodec when a key does not encode (nothing is
// deleted); ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or
// a Redis error otherwise.
func (m *Map[K, V]) FastRemove(ctx context.Context, keys ...K) (_ int64, err error) {
	ctx, rec, err := m.open(ctx, opMapFastRemove)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	if len(keys) == 0 {
		return 0, nil
	}
	fields := make([]string, len(keys))
	for i, key := range keys {
		k, err := m.encodeKey(key)
		if err != nil {
			return 0, err
		}
		fields[i] = string(k)
	}
	defer m.write()()
	m.c.trip(ctx, 1)
	n, err := m.c.rdb.HDel(ctx, m.name, fields...).Result()
	return n, m.wrap(err)
}

// ContainsKey reports whether key is present. It returns the errors of Get
// but a stored value that does not decode (present all the same). With
// WithClientSideCaching it shares Get's cached entries: a hit answers from
// memory, a miss reads (and caches) the value as Get does.
func (m *Map[K, V]) ContainsKey(ctx context.Context, key K) (_ bool, err error) {
	ctx, rec, err := m.open(ctx, opMapContainsKey)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	k, err := m.encodeKey(key)
	if err != nil {
		return false, err
	}
	if m.cached {
		if tc := m.c.clientCache(); tc != nil {
			_, ok, err := cachedGet[V](ctx, &m.base, tc, string(k))
			if errors.Is(err, ErrCodec) {
				return true, nil // only a stored value fails to decode; it is not cached
			}
			return ok, err
		}
	}
	m.c.trip(ctx, 1)
	ok, err := m.c.rdb.HExists(ctx, m.name, string(k)).Result()
	return ok, m.wrap(err)
}

// Size returns the number of entries (0 when the map does not exist). It
// returns ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a
// Redis error.
func (m *Map[K, V]) Size(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := m.open(ctx, opMapSize)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	m.c.trip(ctx, 1)
	n, err := m.c.rdb.HLen(ctx, m.name).Result()
	return n, m.wrap(err)
}

// ReadAll returns every entry in one HGETALL (an empty map when the map does
// not exist). It reads the whole hash at once: iterate large maps with
// Iterator instead. It returns ErrCodec when a stored key or value does not
// decode; ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a
// Redis error otherwise.
func (m *Map[K, V]) ReadAll(ctx context.Context) (_ map[K]V, err error) {
	ctx, rec, err := m.open(ctx, opMapReadAll)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return nil, err
	}
	m.c.trip(ctx, 1)
	all, err := m.c.rdb.HGetAll(ctx, m.name).Result()
	if err != nil {
		return nil, m.wrap(err)
	}
	out := make(map[K]V, len(all))
	for f, s := range all {
		k, v, err := m.entry(f, s)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// entry decodes one stored field and value.
func (m *Map[K, V]) entry(field, value string) (K, V, error) {
	k, err := decodeValue[K](m.codec, m.object, []byte(field))
	if err == nil && !reflect.ValueOf(&k).Elem().Comparable() {
		// A K holding an interface (any) may decode to a slice or a map,
		// which would panic as a Go map key (ReadAll).
		err = &codecError{object: m.object, codec: m.codec.Name(), op: "decode",
			err: fmt.Errorf("key %v is not comparable", k)}
	}
	if err != nil {
		var zero K
		var v V
		return zero, v, err
	}
	v, err := decodeValue[V](m.codec, m.object, []byte(value))
	return k, v, err
}

// Delete deletes the map (whatever type its key holds, like Redisson) and
// reports whether it existed. It returns ErrEmptyName, ErrInvalidName,
// ErrClientClosed, or a Redis error.
func (m *Map[K, V]) Delete(ctx context.Context) (_ bool, err error) {
	ctx, rec, err := m.open(ctx, opMapDelete)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	defer m.write()()
	m.c.trip(ctx, 1)
	n, err := m.c.rdb.Del(ctx, m.name).Result()
	return n == 1, m.wrap(err)
}

// AddAndGet adds delta to the number at key (0 when absent) and returns the
// sum, atomically on the server (Redisson's RMap.addAndGet). V must be a
// signed integer or float type, and the codec one that can add:
//
//   - StringCodec stores numbers as decimal text: HINCRBY for integer
//     types, HINCRBYFLOAT for floats.
//   - JSONCodec: HINCRBYFLOAT for floats; for integers a script that reads a
//     bare integer or one wrapped with a Java integer type id and writes the
//     sum as the codec writes V (int and int64 as ["java.lang.Long",n], as
//     Jackson writes a Long), with Redis's exact int64 arithmetic.
//   - MsgpackCodec decodes the stored MessagePack number (bare or wrapped
//     with a Java integer type id) and encodes the sum in a script (Redis's
//     cmsgpack and struct), as the codec writes V: int and int64 as a
//     wrapped java.lang.Long, other integer types in the smallest integer
//     form, float 64 for float64 (a Java Double), float 32 for float32.
//     Lua numbers are doubles, so integer values work within +-(2^53 - 1).
//
// It returns an error matching ErrCodec, leaving the map unchanged, for
// another codec (BytesCodec, a custom one), a non-numeric V, a NaN or
// infinite delta, a stored value that is not a number of V's kind, or (with
// msgpack) an integer out of that range. A sum that does not fit V (an int8
// past 127, say) is stored and then reported as ErrCodec on decode. It
// returns ErrNilValue for a nil pointer key; ErrEmptyName, ErrInvalidName,
// ErrWrongType, ErrClientClosed, or a Redis error otherwise.
func (m *Map[K, V]) AddAndGet(ctx context.Context, key K, delta V) (_ V, err error) {
	ctx, rec, err := m.open(ctx, opMapAddAndGet)
	defer func() { rec.end(err, OutcomeOK) }()
	var zero V
	if err != nil {
		return zero, err
	}
	defer m.write()()
	k, err := m.encodeKey(key)
	if err != nil {
		return zero, err
	}
	d, isInt, err := m.number(delta)
	if err != nil {
		return zero, err
	}
	kind := "int" // int8..int32: a Java Integer
	switch {
	case !isInt:
		kind = "float" + strconv.Itoa(8*int(reflect.TypeOf(delta).Size()))
	case asJavaLong(delta, msgpackCustomEncoder, msgpackMarshaler, binaryMarshaler, textMarshaler, jsonMarshaler):
		kind = "long" // int, int64: a Java Long, written with its type id
	}
	var reply string
	switch m.codec.(type) {
	case MsgpackCodec, *MsgpackCodec:
		reply, err = m.c.scripts.run(ctx, scriptMapAddMsgpack, []string{m.name}, k, d, kind).Text()
	case JSONCodec, *JSONCodec:
		if isInt {
			reply, err = m.c.scripts.run(ctx, scriptMapAddJSON, []string{m.name}, k, d, kind).Text()
			break
		}
		var f float64
		m.c.trip(ctx, 1)
		f, err = m.c.rdb.HIncrByFloat(ctx, m.name, string(k), reflect.ValueOf(delta).Float()).Result()
		reply = strconv.FormatFloat(f, 'g', -1, 64)
	case StringCodec, *StringCodec:
		if isInt {
			var n int64
			m.c.trip(ctx, 1)
			n, err = m.c.rdb.HIncrBy(ctx, m.name, string(k), int64(reflect.ValueOf(delta).Int())).Result()
			reply = strconv.FormatInt(n, 10)
		} else {
			var f float64
			m.c.trip(ctx, 1)
			f, err = m.c.rdb.HIncrByFloat(ctx, m.name, string(k), reflect.ValueOf(delta).Float()).Result()
			reply = strconv.FormatFloat(f, 'g', -1, 64)
		}
	default:
		return zero, m.codecErr("AddAndGet is not supported by this codec")
	}
	if err != nil {
		if msg := err.Error(); strings.HasPrefix(msg, "REDISSON_CODEC") || strings.Contains(msg, "hash value is not") {
			return zero, m.codecErr(msg)
		}
		return zero, m.wrap(err)
	}
	return decodeValue[V](m.codec, m.object, []byte(reply))
}

// number formats delta for AddAndGet and reports whether V is an integer
// type; it refuses non-numeric types and NaN or infinite floats.
func (m *Map[K, V]) number(delta V) (string, bool, error) {
	rv := reflect.ValueOf(&delta).Elem()
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10), true, nil
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return "", false, m.codecErr(fmt.Sprintf("cannot add %v", f))
		}
		return strconv.FormatFloat(f, 'g', -1, 64), false, nil
	}
	return "", false, m.codecErr(fmt.Sprintf("AddAndGet needs a signed integer or float value type, not %T", delta))
}

func (m *Map[K, V]) codecErr(msg string) error {
	return &codecError{object: m.object, codec: m.codec.Name(), op: "add", err: errors.New(msg)}
}
