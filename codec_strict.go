package redisson

import (
	"bytes"
	"fmt"
	"reflect"
)

// strictDecode is the check of a Strict codec after a decode that
// succeeded: data must be exactly the bytes marshal writes for the value
// decoded into v (a pointer). MessagePack and JSON read many byte strings
// as the same value; of those, a strict codec accepts only its own. That is
// what catches a value another writer stored: the text "1" (one byte, 0x31)
// is the MessagePack integer 49, which MsgpackCodec writes as 0x31 for an
// int8..int32 but as a wrapped java.lang.Long for an int or int64, and as
// the text 1 is JSON for 1, which JSONCodec writes ["java.lang.Long",1]
// for an int.
func strictDecode(marshal func(any) ([]byte, error), data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return nil // the decode itself refused it
	}
	again, err := marshal(rv.Elem().Interface())
	if err != nil {
		return fmt.Errorf("strict: the decoded %s does not encode again: %w", rv.Elem().Type(), err)
	}
	if !bytes.Equal(again, data) {
		return fmt.Errorf("strict: % x is not what this codec writes for the %s it decodes to (% x): written by another writer or codec?",
			short(data), rv.Elem().Type(), short(again))
	}
	return nil
}

// short returns at most the first 16 bytes of b, for an error message.
func short(b []byte) []byte {
	if len(b) > 16 {
		return b[:16]
	}
	return b
}
