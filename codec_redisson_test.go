package redisson

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// recordedCodecs is the recording of a real Redisson client's codecs,
// copied from the workplace's shared reference (sharedCodecs, beside the
// checkout) so that a clone alone runs the suite; TestCodecRecordingCopyCurrent
// keeps the copy identical to the reference wherever the reference exists.
const (
	recordedCodecs = "testdata/redisson-real/codecs.json"
	sharedCodecs   = "../shared/reference/redisson-real/codecs.json"
)

// The copy in testdata is the shared recording, byte for byte, when the
// shared reference sits beside the checkout.
func TestCodecRecordingCopyCurrent(t *testing.T) {
	shared, err := os.ReadFile(sharedCodecs)
	if errors.Is(err, os.ErrNotExist) {
		t.Logf("%s is not beside this checkout: nothing to compare the copy with", sharedCodecs)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	copied, err := os.ReadFile(recordedCodecs)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(shared, copied) {
		t.Fatalf("%s differs from %s: copy the shared recording again", recordedCodecs, sharedCodecs)
	}
}

type javaRead struct {
	Class    *string `json:"class"`
	ToString string  `json:"toString"`
}

type recording struct {
	EncodeBucketSet []struct {
		Codec     string          `json:"codec"`
		ValueID   string          `json:"value_id"`
		JavaClass string          `json:"java_class"`
		Hex       string          `json:"hex"`
		Get       *javaRead       `json:"get_returns"`
		GetError  json.RawMessage `json:"get_error"`
		SetError  json.RawMessage `json:"set_error"`
	} `json:"encode_bucket_set"`
	EncodeMapPut []struct {
		Codec     string    `json:"codec"`
		KeyExpr   string    `json:"key_expr"`
		KeyClass  string    `json:"key_class"`
		ValueExpr string    `json:"value_expr"`
		ValClass  string    `json:"value_class"`
		FieldHex  string    `json:"field_hex"`
		ValueHex  string    `json:"value_hex"`
		Get       *javaRead `json:"get_returns"`
	} `json:"encode_map_put"`
	DecodeBucketGet []struct {
		Codec    string          `json:"codec"`
		InputID  string          `json:"input_id"`
		InputHex string          `json:"input_hex"`
		Get      *javaRead       `json:"get_returns"`
		GetError json.RawMessage `json:"get_error"`
	} `json:"decode_bucket_get"`
}

func loadRecording(t *testing.T) *recording {
	t.Helper()
	b, err := os.ReadFile(recordedCodecs)
	if err != nil {
		abs, _ := filepath.Abs(recordedCodecs)
		t.Fatalf("the recording of a real Redisson client's codecs must be at %s: %v", abs, err)
	}
	var r recording
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", recordedCodecs, err)
	}
	if len(r.EncodeBucketSet) == 0 || len(r.DecodeBucketGet) == 0 || len(r.EncodeMapPut) == 0 {
		t.Fatalf("%s: a section is empty", recordedCodecs)
	}
	return &r
}

// goCodecs are the Go counterparts of Redisson's codecs. LongCodec,
// IntegerCodec and DoubleCodec have none.
var goCodecs = map[string]Codec{
	"MsgPackJacksonCodec": MsgpackCodec{},
	"JsonJacksonCodec":    JSONCodec{},
	"StringCodec":         StringCodec{},
	"ByteArrayCodec":      BytesCodec{},
}

// goValues are the Java values docs/objects.md says round-trip, as the Go
// value of the Go type they correspond to (by value_id of the recording).
var goValues = map[string]any{
	"string_ascii": "hello", "string_unicode": "héllo 世界 😀", "string_empty": "", "string_digits": "42",
	"char_x": "x", "enum": "GREEN",
	"int_0": int32(0), "int_-1": int32(-1), "int_127": int32(127), "int_128": int32(128),
	"int_65536": int32(65536), "int_max": int32(math.MaxInt32), "int_min": int32(math.MinInt32),
	"long_0": int64(0), "long_42": int64(42), "long_-1": int64(-1), "long_5000000000": int64(5000000000),
	"long_max": int64(math.MaxInt64), "long_min": int64(math.MinInt64),
	"short_7": int16(7), "short_-300": int16(-300), "byte_5": int8(5), "byte_-1": int8(-1),
	"double_1.5": 1.5, "double_0.1": 0.1, "double_2.0": 2.0, "double_1e300": 1e300,
	"double_NaN": math.NaN(), "double_+Inf": math.Inf(1), "double_-Inf": math.Inf(-1), "double_-0.0": math.Copysign(0, -1),
	"float_1.5": float32(1.5), "float_0.1": float32(0.1),
	"bool_true": true, "bool_false": false,
	"bytes": []byte{0x00, 0x01, 0xff},
}

// javaClassOf is the class Java reads back from what Go writes for a value
// of type v's type: docs/objects.md's table.
func javaClassOf(codec string, v any) string {
	switch codec {
	case "StringCodec":
		return "java.lang.String" // every value, whoever wrote it
	case "ByteArrayCodec":
		return "[B"
	}
	switch v.(type) {
	case string:
		return "java.lang.String"
	case int64:
		return "java.lang.Long"
	case int32, int16, int8:
		return "java.lang.Integer"
	case float64, float32:
		return "java.lang.Double"
	case bool:
		return "java.lang.Boolean"
	case []byte:
		if codec == "JsonJacksonCodec" {
			return "java.lang.String" // base64 text
		}
		return "[B"
	}
	return "?"
}

// notRoundTripping are the recorded rows of the Go-counterpart codecs whose
// Java value has no Go value that round-trips, by codec/value_id prefix:
// docs/objects.md says so, and why.
var notRoundTripping = map[string]string{
	"JsonJacksonCodec/double_NaN":  "Jackson writes the JSON string \"NaN\", which Java itself reads back as a String; Go's JSONCodec refuses NaN and Inf",
	"JsonJacksonCodec/double_+Inf": "as NaN",
	"JsonJacksonCodec/double_-Inf": "as NaN",
	"bigdecimal":                   "BigDecimal: no Go type (an any gets the number)",
	"biginteger":                   "BigInteger: no Go type (an any gets the number)",
	"uuid":                         "UUID: no Go type (an any gets the string)",
	"date":                         "Date: an any gets a time.Time, but Go's time.Time is written as a msgpack timestamp / RFC 3339 text",
	"instant":                      "Java cannot write it (no JSR-310 module)",
	"localdatetime":                "Java cannot write it (no JSR-310 module)",
	"optional":                     "Java cannot read its own bytes",
	"arraylist":                    "collections: an any gets a []any, but Go writes slices as bare arrays, which Java cannot read",
	"arrays_aslist":                "as arraylist",
	"list_of":                      "as arraylist (and Java cannot read its own bytes)",
	"linkedlist":                   "as arraylist",
	"hashset":                      "as arraylist",
	"linkedhashset":                "as arraylist",
	"treeset":                      "as arraylist",
	"int_array":                    "as arraylist (and Java cannot read its own bytes)",
	"string_array":                 "as arraylist (and Java cannot read its own bytes)",
	"object_array":                 "as arraylist",
	"hashmap":                      "maps: an any gets a map without \"@class\", but Go writes maps without it, which Java cannot read",
	"linkedhashmap":                "as hashmap",
	"treemap":                      "as hashmap",
	"pojo":                         "POJOs: Go structs are written without \"@class\"",
}

// javaCannotRead are rows Go writes byte for byte as Java does, but which
// this recording's Java (Debian Jackson 2.14) fails to read back itself.
var javaCannotRead = map[string]bool{
	"JsonJacksonCodec/long_max": true, // "Numeric value ... out of range of long"
	"JsonJacksonCodec/long_min": true,
}

// goWritesOther are rows where Go writes other bytes than Java: the reason
// and the recorded row (codec/input_id) showing what Java reads from bytes
// of Go's form.
var goWritesOther = map[string]string{
	"JsonJacksonCodec/double_1e300": "JsonJacksonCodec/num_1e3", // Go: 1e+300, Java: 1.0E300
	"StringCodec/double_1e300":      "StringCodec/ascii_1e3",    // Go: 1e+300
	// Go writes U+1F600 as UTF-8, Jackson as \uD83D\uDE00: Java reads raw UTF-8 as the String.
	"JsonJacksonCodec/string_unicode": "JsonJacksonCodec/str_unicode_raw",
}

func mustUnhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameValue compares decoded values, NaN equal to NaN and -0 unequal to 0.
func sameValue(a, b any) bool {
	fa, okA := toFloat(a)
	fb, okB := toFloat(b)
	if okA && okB && reflect.TypeOf(a) == reflect.TypeOf(b) {
		if math.IsNaN(fa) || math.IsNaN(fb) {
			return math.IsNaN(fa) && math.IsNaN(fb)
		}
		return fa == fb && math.Signbit(fa) == math.Signbit(fb)
	}
	return reflect.DeepEqual(a, b)
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	}
	return 0, false
}

// javaReadsBack returns what the recording says Java reads from b with the
// codec: the class, or "error", or "" when b was never recorded.
func (r *recording) javaReadsBack(codec string, b []byte) string {
	h := hex.EncodeToString(b)
	for _, e := range r.EncodeBucketSet {
		if e.Codec == codec && e.Hex == h && e.SetError == nil {
			if e.Get == nil || e.Get.Class == nil {
				return "error"
			}
			return *e.Get.Class
		}
	}
	for _, d := range r.DecodeBucketGet {
		if d.Codec == codec && d.InputHex == h {
			if d.Get == nil || d.Get.Class == nil {
				return "error"
			}
			return *d.Get.Class
		}
	}
	return ""
}

func (r *recording) readByID(id string) string {
	for _, d := range r.DecodeBucketGet {
		if d.Codec+"/"+d.InputID == id && d.Get != nil && d.Get.Class != nil {
			return *d.Get.Class
		}
	}
	return ""
}

func notRoundTrippingReason(codec, id string) string {
	if r, ok := notRoundTripping[codec+"/"+id]; ok {
		return r
	}
	for p, r := range notRoundTripping {
		if !strings.Contains(p, "/") && strings.HasPrefix(id, p) {
			return r
		}
	}
	return ""
}

// TestCodecRecordedJavaBytes checks every RBucket.set row of the recording
// for the codecs Go has: a value docs/objects.md says round-trips decodes
// into its Go type (and into any), Go writes the same bytes (or bytes the
// recording shows Java reads as the same type), and Java reads Go's bytes
// back as the class the docs name. Every other row must be documented as not
// round-tripping.
func TestCodecRecordedJavaBytes(t *testing.T) {
	rec := loadRecording(t)
	tested := 0
	for _, e := range rec.EncodeBucketSet {
		codec, ok := goCodecs[e.Codec]
		if !ok {
			continue
		}
		row := e.Codec + "/" + e.ValueID
		want, claimed := goValues[e.ValueID]
		if reason := notRoundTrippingReason(e.Codec, e.ValueID); reason != "" || !claimed {
			if reason == "" {
				t.Errorf("%s: neither a Go value nor documented as not round-tripping", row)
			}
			continue
		}
		if e.Codec == "ByteArrayCodec" && e.ValueID != "bytes" {
			continue // ByteArrayCodec takes byte[] only (set_error)
		}
		if e.Codec == "StringCodec" && e.ValueID == "bytes" {
			continue // Java's StringCodec writes nothing for a byte[]
		}
		tested++
		if e.SetError != nil {
			t.Errorf("%s: Java could not write it, yet it is claimed", row)
			continue
		}
		data := mustUnhex(t, e.Hex)
		ptr := reflect.New(reflect.TypeOf(want))
		if err := codec.Unmarshal(data, ptr.Interface()); err != nil {
			t.Errorf("%s: Unmarshal(%x) into %T: %v", row, data, want, err)
		} else if got := ptr.Elem().Interface(); !sameValue(got, want) {
			t.Errorf("%s: decoded %#v, want %#v", row, got, want)
		}
		g, err := codec.Marshal(want)
		if err != nil {
			t.Errorf("%s: Marshal(%#v): %v", row, want, err)
			continue
		}
		wantClass := javaClassOf(e.Codec, want)
		read := rec.javaReadsBack(e.Codec, g)
		if !bytes.Equal(g, data) {
			evidence, listed := goWritesOther[row]
			if !listed {
				t.Errorf("%s: Go writes %x, Java %x", row, g, data)
				continue
			}
			if read == "" {
				read = rec.readByID(evidence)
			}
		}
		if e.Codec == "StringCodec" && read == "" {
			read = "java.lang.String" // checked for every StringCodec row by TestCodecRecordedGoBytes
		}
		switch {
		case javaCannotRead[row]:
			if read != "error" {
				t.Errorf("%s: listed as unreadable by Java, but the recording says %q", row, read)
			}
		case read != wantClass:
			t.Errorf("%s: Java reads Go's %x back as %q, want %q", row, g, read, wantClass)
		}
		if e.Codec == "MsgPackJacksonCodec" || e.Codec == "JsonJacksonCodec" {
			var got any
			if err := codec.Unmarshal(data, &got); err != nil {
				t.Errorf("%s: Unmarshal into any: %v", row, err)
			} else if lw := looseGo(e.Codec, want); !sameValue(got, lw) {
				t.Errorf("%s: decoded into any %#v (%T), want %#v (%T)", row, got, got, lw, lw)
			}
		}
	}
	if tested < 100 {
		t.Errorf("tested %d rows, want over 100: has the recording changed?", tested)
	}
}

// looseGo is the Go value an any gets for want: int64 for every integer,
// float64 for every float, base64 text for JSON bytes.
func looseGo(codec string, want any) any {
	rv := reflect.ValueOf(want)
	switch {
	case rv.CanInt():
		return rv.Int()
	case rv.Kind() == reflect.Float32 && codec == "JsonJacksonCodec":
		f, _ := strconv.ParseFloat(strconv.FormatFloat(rv.Float(), 'g', -1, 32), 64)
		return f // the text 0.1, read as a float64
	case rv.CanFloat():
		return rv.Float()
	}
	if b, ok := want.([]byte); ok && codec == "JsonJacksonCodec" {
		j, _ := json.Marshal(b)
		s, _ := strconv.Unquote(string(j))
		return s
	}
	return want
}

// TestCodecRecordedMapPut checks the RMap.put rows of plain keys and values:
// Go writes the same field (a field is the encoded key: anything else is
// another entry) and value bytes, and reads both.
func TestCodecRecordedMapPut(t *testing.T) {
	rec := loadRecording(t)
	parse := func(expr, class string) (any, bool) {
		switch class {
		case "java.lang.String":
			s, err := strconv.Unquote(expr)
			return s, err == nil
		case "java.lang.Long":
			n, err := strconv.ParseInt(strings.TrimSuffix(expr, "L"), 10, 64)
			return n, err == nil
		case "java.lang.Integer":
			n, err := strconv.ParseInt(expr, 10, 32)
			return int32(n), err == nil
		case "java.lang.Double":
			f, err := strconv.ParseFloat(expr, 64)
			return f, err == nil
		case "java.lang.Boolean":
			b, err := strconv.ParseBool(expr)
			return b, err == nil
		}
		return nil, false
	}
	tested := 0
	for i, e := range rec.EncodeMapPut {
		codec, ok := goCodecs[e.Codec]
		if !ok || e.Get == nil {
			continue
		}
		k, okK := parse(e.KeyExpr, e.KeyClass)
		v, okV := parse(e.ValueExpr, e.ValClass)
		if !okK || !okV {
			continue // UUID, enum, POJO, bytes, list: see TestCodecRecordedJavaBytes
		}
		tested++
		for _, part := range []struct {
			what string
			v    any
			hex  string
		}{{"field", k, e.FieldHex}, {"value", v, e.ValueHex}} {
			data := mustUnhex(t, part.hex)
			if g, err := codec.Marshal(part.v); err != nil || !bytes.Equal(g, data) {
				t.Errorf("encode_map_put[%d] %s: %s Marshal(%#v) = %x, %v; Java wrote %x", i, e.Codec, part.what, part.v, g, err, data)
			}
			ptr := reflect.New(reflect.TypeOf(part.v))
			if err := codec.Unmarshal(data, ptr.Interface()); err != nil || !sameValue(ptr.Elem().Interface(), part.v) {
				t.Errorf("encode_map_put[%d] %s: %s Unmarshal(%x) = %#v, %v; want %#v", i, e.Codec, part.what, data, ptr.Elem().Interface(), err, part.v)
			}
		}
	}
	if tested < 20 {
		t.Errorf("tested %d map rows, want at least 20", tested)
	}
}

// goTypeOfClass is the Go type that reads what Java reads as the class.
var goTypeOfClass = map[string]reflect.Type{
	"java.lang.String":  reflect.TypeFor[string](),
	"java.lang.Integer": reflect.TypeFor[int32](),
	"java.lang.Long":    reflect.TypeFor[int64](),
	"java.lang.Double":  reflect.TypeFor[float64](),
	"java.lang.Boolean": reflect.TypeFor[bool](),
	"[B":                reflect.TypeFor[[]byte](),
}

// goStricter are the RBucket.get rows Java reads but Go refuses: Go
// decodes one whole value or nothing (docs/objects.md, "Decoding is
// strict"), while msgpack-jackson reads the first value and ignores the rest.
var goStricter = map[string]bool{
	"MsgPackJacksonCodec/trailing_bytes": true, // 2a c0: 42 and a nil
}

// TestCodecRecordedGoBytes checks the RBucket.get rows (Go-style bytes that
// Java read): every one Java read as a String, Integer, Long, Double,
// Boolean, byte[] or null, Go reads into the matching Go type with the same
// value, except text bytes read with msgpack and the trailing-bytes row
// (Go is strict). It also checks that Java's StringCodec reads every
// recorded byte string as a String.
func TestCodecRecordedGoBytes(t *testing.T) {
	rec := loadRecording(t)
	tested := 0
	for _, d := range rec.DecodeBucketGet {
		row := d.Codec + "/" + d.InputID
		if d.Codec == "StringCodec" && (d.Get == nil || d.Get.Class == nil || *d.Get.Class != "java.lang.String") {
			t.Errorf("%s: Java's StringCodec did not read a String", row)
		}
		codec, ok := goCodecs[d.Codec]
		if !ok || d.Get == nil {
			continue
		}
		data := mustUnhex(t, d.InputHex)
		if d.Codec == "MsgPackJacksonCodec" && (strings.HasPrefix(d.InputID, "ascii_") || d.InputID == "utf8_unicode") || goStricter[row] {
			var v any
			if err := codec.Unmarshal(data, &v); err == nil {
				t.Errorf("%s: Go decoded %x as %#v; want an error (Java reads only the first byte)", row, data, v)
			}
			continue
		}
		if d.Get.Class == nil { // null
			var p *string
			if err := codec.Unmarshal(data, &p); err != nil || p != nil {
				t.Errorf("%s: Unmarshal(%x) into *string = %v, %v; want nil", row, data, p, err)
			}
			continue
		}
		typ, ok := goTypeOfClass[*d.Get.Class]
		if !ok {
			continue // BigInteger, collections, maps, POJOs, extension types
		}
		tested++
		ptr := reflect.New(typ)
		if err := codec.Unmarshal(data, ptr.Interface()); err != nil {
			t.Errorf("%s: Unmarshal(%x) into %s: %v (Java read %s %s)", row, data, typ, err, *d.Get.Class, d.Get.ToString)
			continue
		}
		var want any
		var err error
		s := d.Get.ToString
		switch typ.Kind() {
		case reflect.String:
			want = s
		case reflect.Int32:
			var n int64
			n, err = strconv.ParseInt(s, 10, 32)
			want = int32(n)
		case reflect.Int64:
			want, err = strconv.ParseInt(s, 10, 64)
		case reflect.Float64:
			want, err = strconv.ParseFloat(s, 64)
		case reflect.Bool:
			want, err = strconv.ParseBool(s)
		case reflect.Slice:
			want, err = hex.DecodeString(strings.TrimPrefix(s, "hex:"))
		}
		if err != nil {
			t.Fatalf("%s: toString %q: %v", row, s, err)
		}
		if got := ptr.Elem().Interface(); !sameValue(got, want) {
			t.Errorf("%s: Go decoded %x as %#v; Java as %s %s", row, data, got, *d.Get.Class, s)
		}
	}
	if tested < 80 {
		t.Errorf("tested %d rows, want at least 80", tested)
	}
}

// TestCodecJavaTypeIDsIntoAny checks what an any gets from the type ids
// Redisson writes (recorded bytes).
func TestCodecJavaTypeIDsIntoAny(t *testing.T) {
	for _, tc := range []struct {
		codec Codec
		hex   string
		want  any
	}{
		{MsgpackCodec{}, "92ae6a6176612e6c616e672e4c6f6e672a", int64(42)},
		{MsgpackCodec{}, "92ae6a6176612e6c616e672e4c6f6e67cf000000012a05f200", int64(5000000000)},
		{MsgpackCodec{}, "92b16a6176612e6c616e672e496e74656765722a", int64(42)},
		{MsgpackCodec{}, "92b46a6176612e6d6174682e426967496e746567657207", int64(7)},
		{MsgpackCodec{}, "92b36a6176612e7574696c2e41727261794c69737492a16192ae6a6176612e6c616e672e4c6f6e6701", []any{"a", int64(1)}},
		{MsgpackCodec{}, "92b16a6176612e7574696c2e4861736853657491a178", []any{"x"}},
		{MsgpackCodec{}, "92ae6a6176612e7574696c2e44617465cf0000018bcfe5687b", time.UnixMilli(1700000000123).UTC()},
		{MsgpackCodec{}, "82a640636c617373b16a6176612e7574696c2e486173684d6170a16101", map[string]any{"a": int64(1)}},
		{MsgpackCodec{}, "92a1612a", []any{"a", int64(42)}}, // not a type id: left alone
		{JSONCodec{}, hex.EncodeToString([]byte(`["java.lang.Long",42]`)), int64(42)},
		{JSONCodec{}, hex.EncodeToString([]byte(`42`)), int64(42)},
		{JSONCodec{}, hex.EncodeToString([]byte(`2.0`)), 2.0},
		{JSONCodec{}, hex.EncodeToString([]byte(`{"@class":"java.util.HashMap","a":1,"c":["java.lang.Long",2],"d":1.5}`)), map[string]any{"a": int64(1), "c": int64(2), "d": 1.5}},
		{JSONCodec{}, hex.EncodeToString([]byte(`["java.util.Date",1700000000123]`)), time.UnixMilli(1700000000123).UTC()},
	} {
		var got any
		if err := tc.codec.Unmarshal(mustUnhex(t, tc.hex), &got); err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s Unmarshal(%s) into any = %#v, %v; want %#v", tc.codec.Name(), tc.hex, got, err, tc.want)
		}
	}
	// Strictness holds inside the wrapper: a Long that does not fit, or a
	// wrapper with another type id, is an error, never a zero value.
	for _, tc := range []struct {
		codec Codec
		data  []byte
		into  any
	}{
		{MsgpackCodec{}, mustUnhex(t, "92ae6a6176612e6c616e672e4c6f6e67cd012c"), new(int8)},
		{MsgpackCodec{}, mustUnhex(t, "92ae6a6176612e6c616e672e4c6f6e67ff"), new(uint64)},
		{MsgpackCodec{}, mustUnhex(t, "92a1612a"), new(int64)},
		{MsgpackCodec{}, mustUnhex(t, "92ae6a6176612e6c616e672e4c6f6e67a131"), new(int64)},
		{MsgpackCodec{}, mustUnhex(t, "92ae6a6176612e6c616e672e4c6f6e672ac0"), new(int64)},
		{JSONCodec{}, []byte(`["java.lang.Long",300]`), new(int8)},
		{JSONCodec{}, []byte(`["a",42]`), new(int64)},
		{JSONCodec{}, []byte(`["java.lang.Long",1.5]`), new(int64)},
		{JSONCodec{}, []byte(`42 43`), new(any)},
	} {
		if err := tc.codec.Unmarshal(tc.data, tc.into); err == nil {
			t.Errorf("%s Unmarshal(%q) into %T = %v; want an error", tc.codec.Name(), tc.data, tc.into, reflect.ValueOf(tc.into).Elem())
		}
	}
}
