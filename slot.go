package redisson

import (
	"encoding/binary"
	"strings"
)

// redissonHashKey is the HighwayHash key Redisson hashes values with: the
// four 64-bit words 0x9e3779b97f4a7c15, 0xf39cc0605cedc834,
// 0x1082276bf3a27251, 0xf86c6a11d0c18e95, little-endian.
var redissonHashKey = func() []byte {
	k := make([]byte, 32)
	for i, w := range []uint64{0x9e3779b97f4a7c15, 0xf39cc0605cedc834, 0x1082276bf3a27251, 0xf86c6a11d0c18e95} {
		binary.LittleEndian.PutUint64(k[8*i:], w)
	}
	return k
}()

// hashSlot returns the Redis Cluster hash slot of key: CRC16 (XMODEM) of the
// key, or of its {hash tag} when it has a non-empty one, modulo 16384.
func hashSlot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for k := 0; k < len(key); k++ {
		crc ^= uint16(key[k]) << 8
		for b := 0; b < 8; b++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % 16384
}

// Key naming shared with Redisson: prefixName and suffixName put the object
// name in a {hash tag} so that every key and channel of one object lands in
// the slot of the bare name, unless the name already carries braces.

// prefixName returns prefix + ":{" + name + "}", or prefix + ":" + name when
// name already contains '{'.
func prefixName(prefix, name string) string {
	if strings.Contains(name, "{") {
		return prefix + ":" + name
	}
	return prefix + ":{" + name + "}"
}

// suffixName returns "{" + name + "}:" + suffix, or name + ":" + suffix when
// name already contains '{'.
func suffixName(name, suffix string) string {
	if strings.Contains(name, "{") {
		return name + ":" + suffix
	}
	return "{" + name + "}:" + suffix
}
