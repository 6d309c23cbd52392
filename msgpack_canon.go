package redisson

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"slices"
	"sync"
)

// The msgpack package writes a Go map's entries in Go's random iteration
// order (its SortMapKeys option covers only three map types), so one value
// holding a map could encode to different bytes on every call: a Bucket's
// CompareAndSet (which compares bytes) would fail at random, a Map key would
// become several fields, and a BloomFilter would answer false negatives.
// MsgpackCodec therefore rewrites every MessagePack map of such a value with
// its entries sorted by their encoded key bytes.

// mapTypes caches mayHoldMap per type.
var mapTypes sync.Map // reflect.Type -> bool

// mayHoldMap reports whether a value of type t can encode to bytes holding a
// map written from a Go map: t contains a map or an interface (which may
// hold one). Structs are maps on the wire too, but in field order, which is
// fixed.
func mayHoldMap(t reflect.Type) bool {
	if t == nil {
		return false
	}
	if v, ok := mapTypes.Load(t); ok {
		return v.(bool)
	}
	v := holdsMap(t, map[reflect.Type]bool{})
	mapTypes.Store(t, v)
	return v
}

func holdsMap(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Map, reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return holdsMap(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsMap(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}

var errMsgpackShort = errors.New("msgpack: truncated value")

// canonicalMsgpack returns b (one MessagePack value) with the entries of
// every map sorted by their encoded key bytes.
func canonicalMsgpack(b []byte) ([]byte, error) {
	out, rest, err := canonValue(nil, b)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, errors.New("msgpack: bytes after the value")
	}
	return out, nil
}

// canonValue appends the canonical form of the value at the start of b to
// out and returns the bytes after it.
func canonValue(out, b []byte) ([]byte, []byte, error) {
	if len(b) == 0 {
		return nil, nil, errMsgpackShort
	}
	c := b[0]
	var n, head int // map pairs / array elements, header length
	isMap := false
	switch {
	case c >= 0x80 && c <= 0x8f:
		n, head, isMap = int(c&0x0f), 1, true
	case c >= 0x90 && c <= 0x9f:
		n, head = int(c&0x0f), 1
	case c == 0xde || c == 0xdc:
		if len(b) < 3 {
			return nil, nil, errMsgpackShort
		}
		n, head, isMap = int(binary.BigEndian.Uint16(b[1:])), 3, c == 0xde
	case c == 0xdf || c == 0xdd:
		if len(b) < 5 {
			return nil, nil, errMsgpackShort
		}
		n, head, isMap = int(binary.BigEndian.Uint32(b[1:])), 5, c == 0xdf
	default:
		size, err := scalarSize(b)
		if err != nil {
			return nil, nil, err
		}
		return append(out, b[:size]...), b[size:], nil
	}
	out = append(out, b[:head]...)
	b = b[head:]
	var err error
	if !isMap {
		for range n {
			if out, b, err = canonValue(out, b); err != nil {
				return nil, nil, err
			}
		}
		return out, b, nil
	}
	type entry struct{ k, v []byte }
	entries := make([]entry, n)
	for i := range entries {
		var e entry
		if e.k, b, err = canonValue(nil, b); err != nil {
			return nil, nil, err
		}
		if e.v, b, err = canonValue(nil, b); err != nil {
			return nil, nil, err
		}
		entries[i] = e
	}
	slices.SortFunc(entries, func(x, y entry) int { return bytes.Compare(x.k, y.k) })
	for _, e := range entries {
		out = append(append(out, e.k...), e.v...)
	}
	return out, b, nil
}

// scalarSize returns the encoded length of the non-container value at the
// start of b.
func scalarSize(b []byte) (int, error) {
	c := b[0]
	lenOf := func(w int) (int, error) { // a w-byte length after the code
		if len(b) < 1+w {
			return 0, errMsgpackShort
		}
		switch w {
		case 1:
			return int(b[1]), nil
		case 2:
			return int(binary.BigEndian.Uint16(b[1:])), nil
		}
		return int(binary.BigEndian.Uint32(b[1:])), nil
	}
	var size int
	switch {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		size = 1
	case c >= 0xa0 && c <= 0xbf:
		size = 1 + int(c&0x1f)
	case c == 0xcc || c == 0xd0:
		size = 2
	case c == 0xcd || c == 0xd1:
		size = 3
	case c == 0xca || c == 0xce || c == 0xd2:
		size = 5
	case c == 0xcb || c == 0xcf || c == 0xd3:
		size = 9
	case c >= 0xd4 && c <= 0xd8: // fixext 1, 2, 4, 8, 16
		size = 2 + 1<<(c-0xd4)
	case c == 0xc4 || c == 0xd9 || c == 0xc5 || c == 0xda || c == 0xc6 || c == 0xdb: // bin, str
		w := lenWidth(c)
		l, err := lenOf(w)
		if err != nil {
			return 0, err
		}
		size = 1 + w + l
	case c == 0xc7 || c == 0xc8 || c == 0xc9: // ext 8, 16, 32: length, type, data
		w := lenWidth(c)
		l, err := lenOf(w)
		if err != nil {
			return 0, err
		}
		size = 2 + w + l
	default:
		return 0, errors.New("msgpack: invalid code")
	}
	if size > len(b) {
		return 0, errMsgpackShort
	}
	return size, nil
}

// lenWidth is the width of the length after a bin, str or ext code.
func lenWidth(c byte) int {
	switch c {
	case 0xc4, 0xd9, 0xc7:
		return 1
	case 0xc5, 0xda, 0xc8:
		return 2
	}
	return 4
}
