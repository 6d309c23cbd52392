package redisson

import (
	"context"
	"strconv"
	"time"
)

// KeyedLimiterInfo is what Redis holds of one identity of a keyed limiter
// (FixedWindowLimiter, GCRALimiter), read by Client.InspectKeyedLimiter
// without the limiter's configuration, which lives in its clients only.
// What needs the configuration (the permits remaining, the wait for the
// next one) is the limiter's Peek.
type KeyedLimiterInfo struct {
	// Name is the limiter's name, Key the identity, RedisKey the string
	// holding its state (<name>:{<key>}).
	Name     string `json:"name"`
	Key      string `json:"key"`
	RedisKey string `json:"redis_key"`
	// Present reports whether the identity has state. Without state it has
	// a full allowance; the other fields are then zero.
	Present bool `json:"present"`
	// Kind is KindFixedWindowLimiter or KindGCRALimiter, told by the
	// state's shape as ListObjects tells it; "" when not Present.
	Kind ObjectKind `json:"kind,omitempty"`
	// Used is a fixed window's count: the permits granted (or taken in
	// chunks by local-quota clients) in the current window.
	Used int64 `json:"used,omitempty"`
	// TAT is a GCRA identity's theoretical arrival time: when it will be
	// back to a full burst.
	TAT time.Time `json:"tat,omitzero"`
	// ResetAfter is the state's remaining life (PTTL): the time left in a
	// fixed window, or until a GCRA identity is back to a full burst.
	ResetAfter time.Duration `json:"reset_after"`
	// NoExpiry reports a state without expiry (not written by a limiter;
	// a fixed window's next decision gives it one).
	NoExpiry bool `json:"no_expiry,omitempty"`
	// ServerTime is the Redis server's clock when the state was read.
	ServerTime time.Time `json:"server_time"`
}

// InspectKeyedLimiter reads the state of identity key of the keyed
// limiter called name (a FixedWindowLimiter or GCRALimiter, in local-quota
// mode or not): its kind, a fixed window's count or a GCRA TAT, and the
// time until it is back to a full allowance. It writes nothing: one
// read-only script call, O(1). An identity without state is a
// KeyedLimiterInfo with Present false, not an error; the permits that
// local-quota clients hold in process are counted as used. It returns
// ErrEmptyName, ErrEmptyKey, ErrWrongType (the key holds another type, or
// a string that is not a limiter's state; Redis unchanged),
// ErrClientClosed, or a Redis error.
func (c *Client) InspectKeyedLimiter(ctx context.Context, name, key string) (KeyedLimiterInfo, error) {
	const kind = "keyed limiter"
	if err := c.checkObject(name, nil); err != nil {
		return KeyedLimiterInfo{}, err
	}
	if key == "" {
		return KeyedLimiterInfo{}, objectErrorf(kind, name, "%w", ErrEmptyKey)
	}
	k := identityKey(name, key)
	res, err := c.scripts.run(ctx, scriptInspectKeyed, []string{k}).Slice()
	if err != nil {
		return KeyedLimiterInfo{}, objectErr(kind, k, err)
	}
	typ, _ := res[0].(string)
	pttl, ok1 := res[2].(int64)
	now, ok2 := res[3].(int64)
	shape, _ := res[4].(string)
	if len(res) != 5 || !ok1 || !ok2 {
		return KeyedLimiterInfo{}, objectErrorf(kind, k, "%w: inspect returned %v", ErrUnexpectedReply, res)
	}
	info := KeyedLimiterInfo{Name: name, Key: key, RedisKey: k, ServerTime: time.UnixMicro(now)}
	if typ == "none" {
		return info, nil
	}
	v, _ := res[1].(string)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return KeyedLimiterInfo{}, objectErrorf(kind, k, "%w: state %q", ErrWrongType, v)
	}
	info.Present = true
	switch {
	case pttl >= 0:
		info.ResetAfter = time.Duration(pttl) * time.Millisecond
	default:
		info.NoExpiry = true
	}
	if shape == "gcra" {
		info.Kind, info.TAT = KindGCRALimiter, time.UnixMicro(n)
	} else {
		info.Kind, info.Used = KindFixedWindowLimiter, n
	}
	return info, nil
}
