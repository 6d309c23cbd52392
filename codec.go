package redisson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/vmihailenco/msgpack/v5"
)

// Codec turns the values of typed objects (Bucket, Map, Topic, BloomFilter)
// into the bytes stored in Redis and back. A Codec must be safe for
// concurrent use.
type Codec interface {
	// Name identifies the codec in errors ("msgpack", "json", ...).
	Name() string
	// Marshal encodes v.
	Marshal(v any) ([]byte, error)
	// Unmarshal decodes data into the value v points to.
	Unmarshal(data []byte, v any) error
}

// isNil reports whether v is nil or a nil pointer (the values ErrNilValue
// refuses). Nil maps and slices are values: they encode as empty or nil.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// codecError reports a failed encode or decode.
type codecError struct {
	object string // "Bucket \"name\""
	codec  string
	op     string // "encode" or "decode"
	err    error
}

func (e *codecError) Error() string {
	return fmt.Sprintf("redisson: %s: %s codec cannot %s value: %v", e.object, e.codec, e.op, e.err)
}

func (e *codecError) Is(target error) bool { return target == ErrCodec }
func (e *codecError) Unwrap() error        { return e.err }

// encodeValue and decodeValue wrap a codec call with the object's identity.
func encodeValue(c Codec, object string, v any) ([]byte, error) {
	b, err := c.Marshal(v)
	if err != nil {
		return nil, &codecError{object: object, codec: c.Name(), op: "encode", err: err}
	}
	return b, nil
}

func decodeValue[T any](c Codec, object string, data []byte) (T, error) {
	var v T
	if err := c.Unmarshal(data, &v); err != nil {
		var zero T
		return zero, &codecError{object: object, codec: c.Name(), op: "decode", err: err}
	}
	return v, nil
}

// MsgpackCodec encodes values with MessagePack
// (github.com/vmihailenco/msgpack/v5). It is the default codec.
//
// It writes what Redisson's MsgPackJacksonCodec writes, so that Java reads
// each value back as the type the Go value means (codec_typeid.go): a Go
// int, int64, uint, uint32 or uint64 up to math.MaxInt64 at the top of a
// value as a java.lang.Long with its type id (92 ae "java.lang.Long", then
// the integer); int8..int32, uint8 and uint16 bare (a Java Integer);
// integers in their smallest form (positive or negative fixint, uint8..64
// for values >= 0, int8..64 below); float64 as float 64 (NaN as Java's
// one NaN), float32 as float 32 (Java reads a Double); strings as
// fixstr/str8/str16/str32. A Map field is the encoded key and
// CompareAndSet compares encoded bytes, so both sides must write the same
// bytes for the same value.
//
// Every Go integer type reads a bare integer or one wrapped with a Java
// integer type id. Decoding into a Go interface (a Bucket[any], say) yields
// int64 for every integer (uint64 above math.MaxInt64), float64 for every
// float, string, bool, []byte, nil, map[string]any (map[any]any for other
// keys), []any, and the value a Java type id means (javaValue). Decoding is
// strict: bytes left over after one value, a MessagePack nil decoded into a
// type that cannot be nil (an int64, a string, a struct), or an integer that
// does not fit the Go integer type it is decoded into, are errors rather
// than a silent zero or wrapped value. The entries of every map in a value
// are written sorted by their encoded key bytes, so a value holding a Go map
// encodes to the same bytes every time.
//
// Structs are encoded as maps keyed by field name (or `msgpack` tag), and
// slices as bare arrays, which Jackson cannot read as a java.lang.Object
// (it expects a type id); time.Time uses the MessagePack timestamp
// extension, which Jackson does not read.
//
// A value another writer stored can decode without error: every byte below
// 0x80 is a whole MessagePack integer, so the text "1" written by HSET or
// SET reads as the integer 49 (0x31), "7" as 55. Longer text fails (bytes
// left over). Set Strict to refuse what the codec would not have written.
type MsgpackCodec struct {
	// Strict makes Unmarshal accept only the exact bytes Marshal writes for
	// the value decoded (else ErrCodec from the objects): "1" into an int,
	// int64 or any (written with a Long type id), maps in another order,
	// unknown struct fields. The format's limit: one ASCII byte into an
	// int8..int32 (written bare) is that integer, strict or not. Default false.
	Strict bool
}

func (MsgpackCodec) Name() string { return "msgpack" }

func (MsgpackCodec) Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.GetEncoder()
	enc.Reset(&buf) // clears every flag a previous user of the pool set
	enc.UseCompactInts(true)
	if f, ok := v.(float64); ok && math.IsNaN(f) {
		return []byte{0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0}, nil // Java's one NaN, not Go's bits
	}
	if asJavaLong(v, msgpackCustomEncoder, msgpackMarshaler, binaryMarshaler, textMarshaler) {
		buf.Write(msgpackLongHeader) // [type id, n], as Jackson writes a Long
	}
	err := enc.Encode(v)
	msgpack.PutEncoder(enc)
	if err != nil {
		return nil, err
	}
	if mayHoldMap(reflect.TypeOf(v)) {
		// Go maps encode in random order: sort them (msgpack_canon.go).
		return canonicalMsgpack(buf.Bytes())
	}
	return buf.Bytes(), nil
}

func (c MsgpackCodec) Unmarshal(b []byte, v any) error {
	if len(b) == 1 && b[0] == msgpackNil && !nillable(v) {
		return fmt.Errorf("msgpack nil cannot decode into %T", v)
	}
	r := bytes.NewReader(b)
	dec := msgpack.GetDecoder()
	dec.Reset(r) // clears every flag a previous user of the pool set
	var err error
	if e, ok := plainInteger(v); ok {
		err = decodeInteger(dec, e)
	} else {
		err = dec.Decode(v)
	}
	msgpack.PutDecoder(dec)
	if err == nil && r.Len() > 0 {
		err = fmt.Errorf("%d bytes left over after one msgpack value", r.Len())
	}
	if p, ok := v.(*any); ok && err == nil {
		*p = javaValue(widen(*p))
	}
	if err == nil && c.Strict {
		err = strictDecode(c.Marshal, b, v)
	}
	return err
}

const msgpackNil = 0xc0

// plainInteger returns the integer p points to when it is of an integer
// kind the msgpack package decodes itself (no custom decoding method).
func plainInteger(p any) (reflect.Value, bool) {
	rv := reflect.ValueOf(p)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return reflect.Value{}, false
	}
	switch rv.Elem().Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
	default:
		return reflect.Value{}, false
	}
	t := rv.Type()
	if t.Implements(msgpackCustomDecoder) || t.Implements(msgpackUnmarshaler) ||
		t.Implements(binaryUnmarshaler) || t.Implements(textUnmarshaler) {
		return reflect.Value{}, false
	}
	return rv.Elem(), true
}

// decodeInteger decodes one msgpack integer, bare or wrapped with a Java
// integer type id (codec_typeid.go), into e, refusing one that does not fit
// e's type: the msgpack package would wrap it silently (a Java Long 300 read
// as the int8 44, -1 as the uint64 2^64-1).
func decodeInteger(dec *msgpack.Decoder, e reflect.Value) error {
	x, err := dec.DecodeInterface()
	if err != nil {
		return err
	}
	fits := false
	switch n := unwrapJavaInteger(widen(x)).(type) {
	case int64:
		if e.CanInt() {
			fits = !e.OverflowInt(n)
			if fits {
				e.SetInt(n)
			}
		} else if n >= 0 {
			fits = !e.OverflowUint(uint64(n))
			if fits {
				e.SetUint(uint64(n))
			}
		}
	case uint64: // above math.MaxInt64
		if e.CanUint() {
			fits = !e.OverflowUint(n)
			if fits {
				e.SetUint(n)
			}
		}
	default:
		return fmt.Errorf("msgpack %T cannot decode into %s", x, e.Type())
	}
	if !fits {
		return fmt.Errorf("msgpack integer %v does not fit %s", x, e.Type())
	}
	return nil
}

// nillable reports whether the value p points to may hold nil (a pointer,
// interface, map, slice, channel or function). p is a pointer, as given to
// Unmarshal.
func nillable(p any) bool {
	t := reflect.TypeOf(p)
	if t == nil || t.Kind() != reflect.Pointer {
		return false
	}
	switch t.Elem().Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Chan, reflect.Func:
		return true
	}
	return false
}

// JSONCodec encodes values with encoding/json, without HTML escaping (as
// Jackson writes), and with the Java type ids Redisson's JsonJacksonCodec
// writes at the top of a value: a Go int, int64, uint, uint32 or uint64 up
// to math.MaxInt64 as ["java.lang.Long",n], so Java reads a Long (smaller
// integers bare: an Integer); floats always with a decimal point or exponent
// (3.0, not 3, which Java reads as an Integer). Go writes characters
// outside the BMP as UTF-8 where Jackson writes \uD83D\uDE00, and escapes
// U+2028 and U+2029; Java reads both. Every Go integer type reads a bare or
// wrapped integer; a Go interface gets int64 for integer literals, float64
// for other numbers, and the value a Java type id means (javaValue). Java
// objects carry an "@class" property that Go structs ignore on read and do
// not write. Decoding JSON null into a type that cannot be nil is an error,
// not a zero value. Text another writer stored that happens to be JSON (a
// number written by HSET) decodes without error: set Strict to refuse it.
type JSONCodec struct {
	// Strict is MsgpackCodec's Strict for JSON: a bare 1 into an int
	// (written ["java.lang.Long",1]), other spacing or key order, unknown
	// fields, 1e2 for a float (written 100.0) are errors, and so is a float
	// sum of Map.AddAndGet that Redis stored as 4, not 4.0. Default false.
	Strict bool
}

func (JSONCodec) Name() string { return "json" }

func (JSONCodec) Marshal(v any) ([]byte, error) {
	if asJavaLong(v, jsonMarshaler, textMarshaler) {
		return jsonJavaLong(v), nil // as Jackson writes a Long
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if isPlainFloat(v, jsonMarshaler, textMarshaler) && !bytes.ContainsAny(b, ".eE") {
		b = append(b, ".0"...) // 3.0, not 3, which Java reads as an Integer
	}
	return b, nil
}

func (c JSONCodec) Unmarshal(b []byte, v any) error {
	if string(bytes.TrimSpace(b)) == "null" && !nillable(v) {
		return fmt.Errorf("json null cannot decode into %T", v)
	}
	var err error
	if p, ok := v.(*any); ok {
		err = unmarshalJSONAny(b, p)
	} else if jsonIntegerTarget(v) {
		err = json.Unmarshal(jsonUnwrapInteger(b), v)
	} else {
		err = json.Unmarshal(b, v)
	}
	if err == nil && c.Strict {
		err = strictDecode(c.Marshal, b, v)
	}
	return err
}

// StringCodec stores values as their UTF-8 text, byte for byte what
// Redisson's StringCodec stores. It handles strings, byte slices, integers,
// unsigned integers, floats, booleans and types implementing
// encoding.TextMarshaler / encoding.TextUnmarshaler; anything else is an
// ErrCodec error.
type StringCodec struct{}

func (StringCodec) Name() string { return "string" }

func (StringCodec) Marshal(v any) ([]byte, error) {
	if isNil(v) {
		// A nil pointer has no text, and calling a value-receiver
		// MarshalText through it (a nil *time.Time) panics.
		return nil, fmt.Errorf("string codec cannot encode nil %T", v)
	}
	switch x := v.(type) {
	case string:
		return []byte(x), nil
	case []byte:
		return x, nil
	case encoding.TextMarshaler:
		return x.MarshalText()
	case int:
		return strconv.AppendInt(nil, int64(x), 10), nil
	case int8:
		return strconv.AppendInt(nil, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(nil, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(nil, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(nil, x, 10), nil
	case uint:
		return strconv.AppendUint(nil, uint64(x), 10), nil
	case uint8:
		return strconv.AppendUint(nil, uint64(x), 10), nil
	case uint16:
		return strconv.AppendUint(nil, uint64(x), 10), nil
	case uint32:
		return strconv.AppendUint(nil, uint64(x), 10), nil
	case uint64:
		return strconv.AppendUint(nil, x, 10), nil
	case float32:
		return javaFloatText(float64(x), 32), nil
	case float64:
		return javaFloatText(x, 64), nil
	case bool:
		return strconv.AppendBool(nil, x), nil
	}
	return nil, fmt.Errorf("string codec does not support %T", v)
}

func (StringCodec) Unmarshal(b []byte, v any) error {
	s := string(b)
	var err error
	switch p := v.(type) {
	case *string:
		*p = s
	case *[]byte:
		*p = bytes.Clone(b) // empty, not nil, for an empty value
	case encoding.TextUnmarshaler:
		err = p.UnmarshalText(b)
	case *int:
		err = parseInt(p, s, strconv.IntSize)
	case *int8:
		err = parseInt(p, s, 8)
	case *int16:
		err = parseInt(p, s, 16)
	case *int32:
		err = parseInt(p, s, 32)
	case *int64:
		err = parseInt(p, s, 64)
	case *uint:
		err = parseUint(p, s, strconv.IntSize)
	case *uint8:
		err = parseUint(p, s, 8)
	case *uint16:
		err = parseUint(p, s, 16)
	case *uint32:
		err = parseUint(p, s, 32)
	case *uint64:
		err = parseUint(p, s, 64)
	case *float32:
		var f float64
		f, err = strconv.ParseFloat(s, 32)
		*p = float32(f)
	case *float64:
		*p, err = strconv.ParseFloat(s, 64)
	case *bool:
		*p, err = strconv.ParseBool(s)
	default:
		return fmt.Errorf("string codec does not support %T", v)
	}
	return err
}

// BytesCodec stores []byte values unchanged (Redisson's ByteArrayCodec). It
// supports []byte and string.
type BytesCodec struct{}

func (BytesCodec) Name() string { return "bytes" }

func (BytesCodec) Marshal(v any) ([]byte, error) {
	switch x := v.(type) {
	case []byte:
		return x, nil
	case string:
		return []byte(x), nil
	}
	return nil, fmt.Errorf("bytes codec does not support %T", v)
}

func (BytesCodec) Unmarshal(b []byte, v any) error {
	switch p := v.(type) {
	case *[]byte:
		*p = bytes.Clone(b) // empty, not nil, for an empty value
	case *string:
		*p = string(b)
	default:
		return fmt.Errorf("bytes codec does not support %T", v)
	}
	return nil
}

// encodeNonNil encodes v for object, refusing nil pointers and interfaces
// with ErrNilValue.
func encodeNonNil(c Codec, object string, v any) ([]byte, error) {
	if isNil(v) {
		return nil, &namedError{object: object, cause: ErrNilValue}
	}
	return encodeValue(c, object, v)
}

// parseInt and parseUint parse decimal text into an integer of bits bits.
func parseInt[T ~int | ~int8 | ~int16 | ~int32 | ~int64](p *T, s string, bits int) error {
	n, err := strconv.ParseInt(s, 10, bits)
	*p = T(n)
	return err
}

func parseUint[T ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64](p *T, s string, bits int) error {
	n, err := strconv.ParseUint(s, 10, bits)
	*p = T(n)
	return err
}
