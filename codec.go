package redisson

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
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

// ObjectOption configures one typed object when it is created.
type ObjectOption func(*objectOptions)

type objectOptions struct {
	codec Codec
}

// WithCodec makes an object encode its values with codec instead of the
// client's default (Options.Codec).
func WithCodec(codec Codec) ObjectOption {
	return func(o *objectOptions) { o.codec = codec }
}

// objectCodec resolves the codec of an object created with opts.
func (c *Client) objectCodec(opts []ObjectOption) Codec {
	var o objectOptions
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	if o.codec == nil {
		return c.opts.Codec
	}
	return o.codec
}

// ErrCodec is matched (errors.Is) by every error from encoding a value or
// decoding bytes read from Redis. The error names the object and the codec;
// a value that does not decode is never returned as a zero value.
var ErrCodec = errors.New("redisson: codec error")

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
// (github.com/vmihailenco/msgpack/v5). It is the default codec. Plain values
// (strings, integers, floats, booleans, nil) are the same bytes Redisson's
// MsgPackJacksonCodec writes and reads; structs are encoded as maps keyed by
// field name (or `msgpack` tag), which Jackson reads as a map, not as a
// typed Java object (Jackson expects its "@class" type property for those).
type MsgpackCodec struct{}

func (MsgpackCodec) Name() string                    { return "msgpack" }
func (MsgpackCodec) Marshal(v any) ([]byte, error)   { return msgpack.Marshal(v) }
func (MsgpackCodec) Unmarshal(b []byte, v any) error { return msgpack.Unmarshal(b, v) }

// JSONCodec encodes values with encoding/json. Plain values interoperate with
// Redisson's JsonJacksonCodec; Java objects carry an "@class" property that
// Go structs ignore on read and do not write.
type JSONCodec struct{}

func (JSONCodec) Name() string                    { return "json" }
func (JSONCodec) Marshal(v any) ([]byte, error)   { return json.Marshal(v) }
func (JSONCodec) Unmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// StringCodec stores values as their UTF-8 text, byte for byte what
// Redisson's StringCodec stores. It handles strings, byte slices, integers,
// unsigned integers, floats, booleans and types implementing
// encoding.TextMarshaler / encoding.TextUnmarshaler; anything else is an
// ErrCodec error.
type StringCodec struct{}

func (StringCodec) Name() string { return "string" }

func (StringCodec) Marshal(v any) ([]byte, error) {
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
		return strconv.AppendFloat(nil, float64(x), 'g', -1, 32), nil
	case float64:
		return strconv.AppendFloat(nil, x, 'g', -1, 64), nil
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
		*p = append([]byte(nil), b...)
	case encoding.TextUnmarshaler:
		err = p.UnmarshalText(b)
	case *int:
		var n int64
		n, err = strconv.ParseInt(s, 10, strconv.IntSize)
		*p = int(n)
	case *int8:
		var n int64
		n, err = strconv.ParseInt(s, 10, 8)
		*p = int8(n)
	case *int16:
		var n int64
		n, err = strconv.ParseInt(s, 10, 16)
		*p = int16(n)
	case *int32:
		var n int64
		n, err = strconv.ParseInt(s, 10, 32)
		*p = int32(n)
	case *int64:
		*p, err = strconv.ParseInt(s, 10, 64)
	case *uint:
		var n uint64
		n, err = strconv.ParseUint(s, 10, strconv.IntSize)
		*p = uint(n)
	case *uint8:
		var n uint64
		n, err = strconv.ParseUint(s, 10, 8)
		*p = uint8(n)
	case *uint16:
		var n uint64
		n, err = strconv.ParseUint(s, 10, 16)
		*p = uint16(n)
	case *uint32:
		var n uint64
		n, err = strconv.ParseUint(s, 10, 32)
		*p = uint32(n)
	case *uint64:
		*p, err = strconv.ParseUint(s, 10, 64)
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
// supports only []byte (and string on Marshal).
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
	p, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("bytes codec does not support %T", v)
	}
	*p = append([]byte(nil), b...)
	return nil
}
