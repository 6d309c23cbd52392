package redisson

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"sync/atomic"

	"github.com/minio/highwayhash"
)

// bloomMaxBits is the largest bitmap Redis allows: offsets are below 2^32.
const bloomMaxBits = 1 << 32

// bloomBatch is how many values one script call of AddAll / ContainsAll
// carries; the calls of one batch go out in one pipeline.
const bloomBatch = 1000

const bloomKind = "bloomfilter"

// BloomFilter is a distributed bloom filter of values of type T,
// wire-compatible with Redisson's RBloomFilter: the bits are a Redis string
// at the filter's name, and the config is a hash at {name}:config with the
// fields size, hashIterations, expectedInsertions and falseProbability.
//
// A value's bit positions come from the 128-bit HighwayHash (with Redisson's
// fixed key) of its codec-encoded bytes, as in Redisson, so a Go and a Java
// client that use the same codec (MsgpackCodec here, MsgPackJacksonCodec
// there, for plain values) set and test the same bits of one filter.
//
// Each Add and Contains call checks, in the same script that sets or reads
// the bits, that the stored size and hashIterations are the ones this handle
// computed the positions with; a filter re-initialised with other
// parameters answers ErrBloomConfigMismatch instead of wrong answers.
//
// The handle caches the config after its first read (one extra round trip).
// A BloomFilter is safe for concurrent use.
type BloomFilter[T any] struct {
	base
	config string
	params atomic.Pointer[bloomParams]
}

// bloomParams is what bit positions depend on.
type bloomParams struct {
	size int64 // bits
	k    int   // hash iterations
}

// BloomConfig is a bloom filter's stored config.
type BloomConfig struct {
	Size               int64   // bits in the bitmap
	HashIterations     int     // bits per value
	ExpectedInsertions int64   // as given to TryInit
	FalseProbability   float64 // as given to TryInit
}

// GetBloomFilter returns the bloom filter called name, whose values are
// encoded with the client's codec or the one given WithCodec. It does no
// I/O; an empty name makes every method return ErrEmptyName. On Redis
// Cluster a name containing '{' must carry a complete hash tag; other such
// names return ErrInvalidName.
func GetBloomFilter[T any](c *Client, name string, opts ...ObjectOption) *BloomFilter[T] {
	config := suffixName(name, "config")
	return &BloomFilter[T]{base: newBase(c, bloomKind, name, c.objectCodec(opts), config), config: config}
}

// Name returns the filter's name, the Redis key of its bitmap.
func (f *BloomFilter[T]) Name() string { return f.name }

func (f *BloomFilter[T]) keys() []string { return []string{f.config, f.name} }

func (f *BloomFilter[T]) err(err error) error { return f.wrap(err) }

// bloomSize returns Redisson's bitmap size and hash iterations for n
// expected insertions at false-positive probability p:
// m = -n ln p / (ln 2)^2 (truncated), k = max(1, round(m/n ln 2)).
func bloomSize(n int64, p float64) (int64, int, error) {
	if n < 1 {
		return 0, 0, invalidOption(ErrInvalidBloomConfig, "expected insertions", n, "at least 1")
	}
	if !(p > 0 && p < 1) {
		return 0, 0, invalidOption(ErrInvalidBloomConfig, "false probability", p, "0 < p < 1")
	}
	m := -float64(n) * math.Log(p) / (math.Ln2 * math.Ln2)
	if m >= bloomMaxBits+1 {
		return 0, 0, invalidOption(ErrInvalidBloomConfig, "bitmap size", fmt.Sprintf("%.0f bits", m),
			fmt.Sprintf("at most Redis's limit of 2^32 (%d insertions at probability %v)", n, p))
	}
	size := int64(m)
	if size < 1 {
		return 0, 0, invalidOption(ErrInvalidBloomConfig, "bitmap size", "0 bits",
			fmt.Sprintf("at least 1 (%d insertions at probability %v)", n, p))
	}
	k := max(1, int(math.Round(float64(size)/float64(n)*math.Ln2)))
	return size, k, nil
}

// TryInit sets the filter's config for expectedInsertions values at a
// false-positive probability of falseProbability, unless the filter already
// has a config (of any parameters), and reports whether it did. The bitmap
// size and hash count follow Redisson's formulas, so Go and Java agree.
// It returns ErrInvalidBloomConfig for expectedInsertions < 1, a probability
// outside (0, 1), or a bitmap above 2^32 bits; ErrEmptyName,
// ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis error otherwise.
func (f *BloomFilter[T]) TryInit(ctx context.Context, expectedInsertions int64, falseProbability float64) (_ bool, err error) {
	ctx, rec, err := f.open(ctx, opBloomTryInit)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	size, k, err := bloomSize(expectedInsertions, falseProbability)
	if err != nil {
		return false, objectErrorf(bloomKind, f.name, "%w", err)
	}
	set, err := f.c.scripts.run(ctx, scriptBloomInit, f.keys(), size, k, expectedInsertions,
		strconv.FormatFloat(falseProbability, 'g', -1, 64)).Int64()
	if err != nil {
		return false, f.err(err)
	}
	if set == 1 {
		f.params.Store(&bloomParams{size: size, k: k})
		return true, nil
	}
	f.params.Store(nil) // read the config that is there on next use
	return false, nil
}

// Add adds v and reports whether it was probably new: false means every one
// of its bits was already set (v, or values sharing its bits, was added
// before). It returns ErrNotInitialized before TryInit,
// ErrBloomConfigMismatch when the filter was re-initialised with other
// parameters, ErrNilValue for a nil pointer or interface, ErrCodec when v
// does not encode; ErrEmptyName,
// ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis error otherwise.
func (f *BloomFilter[T]) Add(ctx context.Context, v T) (_ bool, err error) {
	ctx, rec := f.begin(ctx, opBloomAdd)
	defer func() { rec.end(err, OutcomeOK) }()
	n, err := f.run(ctx, scriptBloomAdd, []T{v})
	return n > 0, err
}

// AddAll adds values and returns how many were probably new (see Add). The
// values go in one pipeline of script calls of up to 1000 values each; each
// call is atomic and checks the config, so a failure part-way (an error
// from a later call) leaves the earlier values added. Its errors are those
// of Add.
func (f *BloomFilter[T]) AddAll(ctx context.Context, values []T) (_ int64, err error) {
	ctx, rec := f.begin(ctx, opBloomAdd)
	defer func() { rec.end(err, OutcomeOK) }()
	return f.run(ctx, scriptBloomAdd, values)
}

// Contains reports whether v is probably in the filter: false is certain, true
// is wrong with about the configured false-positive probability once the
// filter holds its expected insertions. Its errors are those of Add.
func (f *BloomFilter[T]) Contains(ctx context.Context, v T) (_ bool, err error) {
	ctx, rec := f.begin(ctx, opBloomContains)
	defer func() { rec.end(err, OutcomeOK) }()
	n, err := f.run(ctx, scriptBloomContains, []T{v})
	return n > 0, err
}

// ContainsAll returns how many of values are probably in the filter (see
// Contains), in one pipeline as AddAll. Its errors are those of Add.
func (f *BloomFilter[T]) ContainsAll(ctx context.Context, values []T) (_ int64, err error) {
	ctx, rec := f.begin(ctx, opBloomContains)
	defer func() { rec.end(err, OutcomeOK) }()
	return f.run(ctx, scriptBloomContains, values)
}

// run sends values to s (add or contains) in batches and sums the replies.
func (f *BloomFilter[T]) run(ctx context.Context, s *script, values []T) (int64, error) {
	if err := f.check(); err != nil {
		return 0, err
	}
	if len(values) == 0 {
		return 0, nil
	}
	p, err := f.loadParams(ctx)
	if err != nil {
		return 0, err
	}
	keys := f.keys()
	calls := make([]*call, 0, (len(values)+bloomBatch-1)/bloomBatch)
	for len(values) > 0 {
		batch := values[:min(len(values), bloomBatch)]
		values = values[len(batch):]
		args := make([]any, 2, 2+len(batch)*p.k)
		args[0], args[1] = p.size, p.k
		for _, v := range batch {
			if args, err = f.appendIndexes(args, v, p); err != nil {
				return 0, err
			}
		}
		calls = append(calls, &call{s: s, keys: keys, args: args})
	}
	var cmdErr error
	if len(calls) == 1 {
		calls[0].cmd = f.c.scripts.run(ctx, s, calls[0].keys, calls[0].args...)
	} else {
		cmdErr = f.c.scripts.runPipelined(ctx, calls)
	}
	var total int64
	for _, cl := range calls {
		n, err := cl.cmd.Int64()
		switch {
		case err != nil:
			return total, f.err(err)
		case n == -1:
			f.params.Store(nil)
			return total, objectErrorf(bloomKind, f.name, "%w", ErrNotInitialized)
		case n == -2:
			f.params.CompareAndSwap(p, nil)
			return total, objectErrorf(bloomKind, f.name, "stored size or hashIterations differ from size %d, hashIterations %d: %w", p.size, p.k, ErrBloomConfigMismatch)
		}
		total += n
	}
	return total, f.err(cmdErr)
}

// appendIndexes appends v's bit positions: Redisson's sequence over the two
// halves h1, h2 of the 128-bit HighwayHash of v's encoding, with wrapping
// 64-bit arithmetic: position i is (h & MaxInt64) mod size, starting at
// h = h1 and adding h2 after even i and h1 after odd i.
func (f *BloomFilter[T]) appendIndexes(dst []any, v T, p *bloomParams) ([]any, error) {
	b, err := encodeNonNil(f.codec, f.object, v)
	if err != nil {
		return dst, err
	}
	sum := highwayhash.Sum128(b, redissonHashKey)
	h1 := int64(binary.LittleEndian.Uint64(sum[:8]))
	h2 := int64(binary.LittleEndian.Uint64(sum[8:]))
	h := h1
	for i := range p.k {
		dst = append(dst, (h&math.MaxInt64)%p.size)
		if i%2 == 0 {
			h += h2
		} else {
			h += h1
		}
	}
	return dst, nil
}

// loadParams returns the cached size and hash count, reading the config
// once when there are none.
func (f *BloomFilter[T]) loadParams(ctx context.Context) (*bloomParams, error) {
	if p := f.params.Load(); p != nil {
		return p, nil
	}
	cfg, err := f.readConfig(ctx)
	if err != nil {
		return nil, err
	}
	p := &bloomParams{size: cfg.Size, k: cfg.HashIterations}
	f.params.Store(p)
	return p, nil
}

// Config reads the filter's config. It returns ErrNotInitialized when the
// filter has none (or one without a valid size or hashIterations);
// ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis
// error otherwise.
func (f *BloomFilter[T]) Config(ctx context.Context) (_ BloomConfig, err error) {
	ctx, rec := f.begin(ctx, opBloomConfig)
	defer func() { rec.end(err, OutcomeOK) }()
	return f.readConfig(ctx)
}

func (f *BloomFilter[T]) readConfig(ctx context.Context) (BloomConfig, error) {
	if err := f.check(); err != nil {
		return BloomConfig{}, err
	}
	f.c.trip(ctx, 1)
	vals, err := f.c.rdb.HMGet(ctx, f.config, "size", "hashIterations", "expectedInsertions", "falseProbability").Result()
	if err != nil {
		return BloomConfig{}, f.err(err)
	}
	field := func(i int) string { s, _ := vals[i].(string); return s }
	var cfg BloomConfig
	size, err1 := strconv.ParseInt(field(0), 10, 64)
	k, err2 := strconv.Atoi(field(1))
	if err1 != nil || err2 != nil || size < 1 || size > bloomMaxBits || k < 1 {
		return cfg, objectErrorf(bloomKind, f.name, "%w", ErrNotInitialized)
	}
	cfg.Size, cfg.HashIterations = size, k
	cfg.ExpectedInsertions, _ = strconv.ParseInt(field(2), 10, 64)
	cfg.FalseProbability, _ = strconv.ParseFloat(field(3), 64)
	return cfg, nil
}

// Size returns the number of bits in the filter's bitmap. Its errors are
// those of Config.
func (f *BloomFilter[T]) Size(ctx context.Context) (int64, error) {
	cfg, err := f.Config(ctx)
	return cfg.Size, err
}

// HashIterations returns how many bits each value sets. Its errors are
// those of Config.
func (f *BloomFilter[T]) HashIterations(ctx context.Context) (int, error) {
	cfg, err := f.Config(ctx)
	return cfg.HashIterations, err
}

// ExpectedInsertions returns the insertion count given to TryInit. Its
// errors are those of Config.
func (f *BloomFilter[T]) ExpectedInsertions(ctx context.Context) (int64, error) {
	cfg, err := f.Config(ctx)
	return cfg.ExpectedInsertions, err
}

// FalseProbability returns the false-positive probability given to
// TryInit. Its errors are those of Config.
func (f *BloomFilter[T]) FalseProbability(ctx context.Context) (float64, error) {
	cfg, err := f.Config(ctx)
	return cfg.FalseProbability, err
}

// Count estimates how many distinct values were added, from the number X
// of set bits as Redisson does: round(-m/k * ln(1 - X/m)) for a bitmap of m
// bits and k hash iterations. It returns ErrNotInitialized before TryInit;
// ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis
// error otherwise.
func (f *BloomFilter[T]) Count(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := f.open(ctx, opBloomCount)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	res, err := f.c.scripts.run(ctx, scriptBloomCount, f.keys()).Result()
	if err != nil {
		return 0, f.err(err)
	}
	reply, ok := res.([]any)
	if !ok || len(reply) != 3 { // -1: no config
		return 0, objectErrorf(bloomKind, f.name, "%w", ErrNotInitialized)
	}
	s0, _ := reply[0].(string)
	s1, _ := reply[1].(string)
	bits, _ := reply[2].(int64)
	m, err1 := strconv.ParseFloat(s0, 64)
	k, err2 := strconv.ParseFloat(s1, 64)
	if err1 != nil || err2 != nil || m < 1 || k < 1 {
		return 0, objectErrorf(bloomKind, f.name, "%w", ErrNotInitialized)
	}
	if float64(bits) >= m { // every bit set: the estimate is unbounded
		return math.MaxInt64, nil
	}
	return int64(math.Round(-m / k * math.Log(1-float64(bits)/m))), nil
}

// Delete deletes the filter's bitmap and config and reports whether either
// existed. It returns ErrEmptyName, ErrInvalidName, ErrClientClosed, or a
// Redis error.
func (f *BloomFilter[T]) Delete(ctx context.Context) (_ bool, err error) {
	ctx, rec, err := f.open(ctx, opBloomDelete)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	f.c.trip(ctx, 1)
	n, err := f.c.rdb.Del(ctx, f.name, f.config).Result()
	f.params.Store(nil)
	return n > 0, f.err(err)
}
