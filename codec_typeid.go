package redisson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// Redisson's JsonJacksonCodec and MsgPackJacksonCodec read and write values
// as java.lang.Object with Jackson's default typing: a value whose class is
// not final, or not a JSON-native type, carries its class name as a type id.
// Objects carry it as an "@class" property; scalars and collections are
// wrapped in a two-element array, [type id, value]. java.lang.Long is
// always wrapped (msgpack 92 ae "java.lang.Long" 2a, JSON
// ["java.lang.Long",42]), while Integer, Short, Byte, Double, Float,
// Boolean and String are not; a bare integer that fits an int is read back
// by Java as an Integer, a bare float 32 as a Double. (Recorded from a real
// Redisson client: testdata/redisson-real/codecs.json.)
//
// So, at the top level of a value (a Bucket's value, a Map's key or value,
// a Topic's message):
//
//   - Go int, int64, uint, uint32 and uint64 (up to math.MaxInt64) are
//     written as a wrapped java.lang.Long; int8, int16, int32, uint8 and
//     uint16 bare (Java reads an Integer); a uint64 above math.MaxInt64 bare
//     (Java reads a BigInteger).
//   - Every Go integer type reads a bare integer or a wrapped
//     java.lang.Long, Integer, Short, Byte or BigInteger.
//   - A Go interface (any) gets the value the type id means (javaValue).

// javaLongID is the type id Jackson writes for a java.lang.Long.
const javaLongID = "java.lang.Long"

// msgpackLongHeader is the start of a wrapped Long in MessagePack: fixarray
// of 2, fixstr of 14, "java.lang.Long". The integer follows.
var msgpackLongHeader = append([]byte{0x92, 0xa0 | byte(len(javaLongID))}, javaLongID...)

// javaIntegerIDs are the type ids of the Java integer classes: a wrapped
// value with one of them decodes into any Go integer type it fits.
var javaIntegerIDs = map[string]bool{
	javaLongID:             true,
	"java.lang.Integer":    true,
	"java.lang.Short":      true,
	"java.lang.Byte":       true,
	"java.math.BigInteger": true,
}

var (
	msgpackCustomEncoder = reflect.TypeFor[msgpack.CustomEncoder]()
	msgpackMarshaler     = reflect.TypeFor[msgpack.Marshaler]()
	binaryMarshaler      = reflect.TypeFor[encoding.BinaryMarshaler]()
	textMarshaler        = reflect.TypeFor[encoding.TextMarshaler]()
	jsonMarshaler        = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshaler      = reflect.TypeFor[json.Unmarshaler]()
	msgpackCustomDecoder = reflect.TypeFor[msgpack.CustomDecoder]()
	msgpackUnmarshaler   = reflect.TypeFor[msgpack.Unmarshaler]()
	binaryUnmarshaler    = reflect.TypeFor[encoding.BinaryUnmarshaler]()
	textUnmarshaler      = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// implementsAny reports whether t or *t implements one of ifaces.
func implementsAny(t reflect.Type, ifaces ...reflect.Type) bool {
	for _, i := range ifaces {
		if t.Implements(i) || reflect.PointerTo(t).Implements(i) {
			return true
		}
	}
	return false
}

// asJavaLong reports whether v (or what the pointer v points to) is a Go
// integer written as a wrapped java.lang.Long: int, int64, uint, uint32, or
// uint64 up to math.MaxInt64, without an encoding method of its own (one of
// ifaces).
func asJavaLong(v any, ifaces ...reflect.Type) bool {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Int, reflect.Int64, reflect.Uint32:
	case reflect.Uint, reflect.Uint64:
		if rv.Uint() > math.MaxInt64 {
			return false // Java reads the bare uint 64 as a BigInteger
		}
	default:
		return false
	}
	return !implementsAny(rv.Type(), ifaces...)
}

// unwrapJavaInteger returns the integer of a wrapped Java integer
// ([]any{"java.lang.Long", n}), or x itself.
func unwrapJavaInteger(x any) any {
	if a, ok := x.([]any); ok && len(a) == 2 {
		if id, ok := a[0].(string); ok && javaIntegerIDs[id] {
			return a[1]
		}
	}
	return x
}

// isJavaCollectionID reports whether id names a Java collection or Object
// array ("java.util.ArrayList", "java.util.HashSet",
// "java.util.ImmutableCollections$List12", "[Ljava.lang.Object;", ...).
func isJavaCollectionID(id string) bool {
	return strings.HasPrefix(id, "java.util.") || strings.HasPrefix(id, "[L")
}

// javaValue turns a value decoded into a Go interface (integers already
// int64, floats float64) into the Go value its Java type ids mean, in
// collections and maps too:
//
//   - [java.lang.Long|Integer|Short|Byte|BigInteger, n] -> n (int64, or
//     uint64 above math.MaxInt64);
//   - [java.math.BigDecimal, x] -> x (int64 or float64, as written);
//   - [java.util.Date, ms] -> time.Time (UTC);
//   - [java.util.UUID, s] -> s (string);
//   - [java.util.<collection> or [L<class>;, [...]] -> []any;
//   - a map whose "@class" names a java.util map -> the map without "@class"
//     (a POJO keeps its "@class", the only record of its Java class).
//
// Any other array, including one whose first element is a string that is
// not one of these type ids, is left as it is.
func javaValue(v any) any {
	switch x := v.(type) {
	case []any:
		for i := range x {
			x[i] = javaValue(x[i])
		}
		if len(x) != 2 {
			return x
		}
		id, ok := x[0].(string)
		if !ok {
			return x
		}
		switch inner := x[1].(type) {
		case int64, uint64:
			switch {
			case javaIntegerIDs[id], id == "java.math.BigDecimal":
				return inner
			case id == "java.util.Date":
				if ms, ok := inner.(int64); ok {
					return time.UnixMilli(ms).UTC()
				}
			}
		case float64:
			if id == "java.math.BigDecimal" {
				return inner
			}
		case string:
			if id == "java.util.UUID" {
				return inner
			}
		case []any:
			if isJavaCollectionID(id) {
				return inner
			}
		}
	case map[string]any:
		for k, e := range x {
			x[k] = javaValue(e)
		}
		if id, ok := x["@class"].(string); ok && isJavaCollectionID(id) {
			delete(x, "@class")
		}
	case map[any]any:
		for k, e := range x {
			x[k] = javaValue(e)
		}
	}
	return v
}

// jsonJavaLong writes the wrapped Long JSON for the integer v (asJavaLong).
func jsonJavaLong(v any) []byte {
	rv := reflect.Indirect(reflect.ValueOf(v))
	b := append([]byte(`["`), javaLongID...)
	b = append(b, `",`...)
	if rv.CanInt() {
		b = strconv.AppendInt(b, rv.Int(), 10)
	} else {
		b = strconv.AppendUint(b, rv.Uint(), 10)
	}
	return append(b, ']')
}

// jsonIntegerTarget reports whether p points to an integer that
// encoding/json decodes itself (no UnmarshalJSON or UnmarshalText).
func jsonIntegerTarget(p any) bool {
	rv := reflect.ValueOf(p)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return false
	}
	switch rv.Elem().Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
	default:
		return false
	}
	return !implementsAny(rv.Elem().Type(), jsonUnmarshaler, textUnmarshaler)
}

// jsonUnwrapInteger returns the number of a wrapped Java integer
// (["java.lang.Long",42] -> 42), or b itself.
func jsonUnwrapInteger(b []byte) []byte {
	t := bytes.TrimSpace(b)
	if len(t) == 0 || t[0] != '[' {
		return b
	}
	var pair []json.RawMessage
	if json.Unmarshal(t, &pair) != nil || len(pair) != 2 {
		return b
	}
	var id string
	if json.Unmarshal(pair[0], &id) != nil || !javaIntegerIDs[id] {
		return b
	}
	return pair[1]
}

// jsonNumbers turns the json.Numbers of a value decoded with UseNumber into
// int64 (an integer literal that fits), uint64 (one above math.MaxInt64 that
// fits) or float64, in arrays and objects too.
func jsonNumbers(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if !strings.ContainsAny(s, ".eE") {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n, nil
			}
			if n, err := strconv.ParseUint(s, 10, 64); err == nil {
				return n, nil
			}
		}
		return strconv.ParseFloat(s, 64)
	case []any:
		for i := range x {
			e, err := jsonNumbers(x[i])
			if err != nil {
				return nil, err
			}
			x[i] = e
		}
	case map[string]any:
		for k := range x {
			e, err := jsonNumbers(x[k])
			if err != nil {
				return nil, err
			}
			x[k] = e
		}
	}
	return v, nil
}

// isPlainFloat reports whether v is a float32 or float64 (of any named type)
// without an encoding method of its own (one of ifaces).
func isPlainFloat(v any, ifaces ...reflect.Type) bool {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	k := rv.Kind()
	return (k == reflect.Float32 || k == reflect.Float64) && !implementsAny(rv.Type(), ifaces...)
}

// javaFloatText formats f (of bits bits) as text Java's Double.valueOf reads
// as the same number: "NaN", "Infinity", "-Infinity", and a decimal point
// in integral values ("3.0", not "3"), as Double.toString writes them.
func javaFloatText(f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return []byte("NaN")
	case math.IsInf(f, 1):
		return []byte("Infinity")
	case math.IsInf(f, -1):
		return []byte("-Infinity")
	}
	b := strconv.AppendFloat(nil, f, 'g', -1, bits)
	if !bytes.ContainsAny(b, ".eE") {
		b = append(b, ".0"...)
	}
	return b
}

// widen turns the integers and floats msgpack decodes into an interface
// (int8..int64, uint8..uint64, float32, by wire format) into int64 (uint64
// above math.MaxInt64) and float64, in maps and slices too: the wire format
// says nothing about the Java type, which Jackson picks from the value.
func widen(v any) any {
	switch x := v.(type) {
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x)
		}
	case float32:
		return float64(x)
	case []any:
		for i := range x {
			x[i] = widen(x[i])
		}
	case map[string]any:
		for k, e := range x {
			x[k] = widen(e)
		}
	case map[any]any:
		for k, e := range x {
			x[k] = widen(e)
		}
	}
	return v
}

// unmarshalJSONAny decodes b into *p as Jackson would read it: integers as
// int64, other numbers as float64, type ids as javaValue says.
func unmarshalJSONAny(b []byte, p *any) error {
	if !json.Valid(b) {
		return json.Unmarshal(b, p) // the error encoding/json gives
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return err
	}
	x, err := jsonNumbers(x)
	if err != nil {
		return err
	}
	*p = javaValue(x)
	return nil
}
