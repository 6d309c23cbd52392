package redisson

import (
	"context"
	"strconv"
	"strings"
)

const idGenKind = "idgenerator"

// IdGenerator hands out unique int64 ids, wire-compatible with Redisson's
// RIdGenerator: the counter (the first id of the next block) is a string at
// the generator's name and the allocation size a string at
// {name}:allocation. Each handle reserves a block of allocation-size ids
// with one script call (INCRBY) and hands them out locally, so ids are
// unique across every handle, client and process (Java ones included), and
// strictly increasing per handle; ids from different handles interleave.
//
// A block whose reservation reply was lost (a cancelled context, a broken
// connection) is skipped, never reused: ids stay unique but may have gaps,
// as do the unused ids of a handle that is dropped.
//
// The name keeps Redisson's spelling. An IdGenerator is safe for concurrent
// use; share one handle per name to get the fewest round trips.
type IdGenerator struct {
	base
	allocation string

	lock chan struct{} // held (full) while the block is used or refilled
	next int64         // next id to hand out
	left int64         // ids left in the block, from next on
}

// GetIdGenerator returns the id generator called name. It does no I/O; an
// empty name makes every method return ErrEmptyName. On Redis Cluster a
// name containing '{' must carry a complete hash tag; other such names
// return ErrInvalidName.
func (c *Client) GetIdGenerator(name string) *IdGenerator {
	allocation := suffixName(name, "allocation")
	return &IdGenerator{
		base:       newBase(c, idGenKind, name, nil, allocation),
		allocation: allocation,
		lock:       make(chan struct{}, 1),
	}
}

// Name returns the generator's name, the Redis key of its counter.
func (g *IdGenerator) Name() string { return g.name }

func (g *IdGenerator) err(err error) error {
	if err != nil && strings.Contains(err.Error(), "not positive") {
		return objectErrorf(idGenKind, g.name, "stored allocation size: %w", ErrInvalidAllocation)
	}
	if err != nil && overflows(err) { // not the semaphore's ErrInvalidPermits
		return objectErrorf(idGenKind, g.name, "the counter would overflow int64: %w", err)
	}
	return intKeyErr(idGenKind, g.name, err)
}

// TryInit sets the first id to start and the allocation size to
// allocationSize, each only where it is not set yet, and reports whether it
// set the allocation size (Redisson's semantics: a generator already used,
// or initialised, reports false and keeps its counter). It returns
// ErrInvalidAllocation for allocationSize < 1; ErrWrongType when a key
// holds another type or a value that is not an integer; ErrEmptyName,
// ErrInvalidName, ErrClientClosed, or a Redis error otherwise. A rejected
// call leaves Redis unchanged.
func (g *IdGenerator) TryInit(ctx context.Context, start, allocationSize int64) (_ bool, err error) {
	ctx, rec, err := g.open(ctx, opIDTryInit)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	if allocationSize < 1 {
		return false, objectErr(idGenKind, g.name, invalidOption(ErrInvalidAllocation, "allocation size", allocationSize, "at least 1"))
	}
	set, err := g.c.scripts.run(ctx, scriptIDGenInit, []string{g.name, g.allocation}, start, allocationSize).Int64()
	return set == 1, g.err(err)
}

// NextID returns the next id: from this handle's block when it has one
// left, otherwise from a new block reserved with one round trip (a
// generator never initialised starts at 1 with blocks of 5000, as in
// Redisson). Concurrent callers on one handle wait for each other; the wait
// and the reservation end with ctx, returning ctx.Err() (wrapped). It
// returns ErrInvalidAllocation when the stored allocation size is not
// positive; ErrEmptyName, ErrInvalidName, ErrWrongType (a key holds another
// type or a value that is not an integer), ErrClientClosed, or a Redis
// error otherwise.
func (g *IdGenerator) NextID(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := g.open(ctx, opIDNext)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, objectErrorf(idGenKind, g.name, "%w", err)
	}
	select {
	case g.lock <- struct{}{}:
	case <-ctx.Done():
		return 0, objectErrorf(idGenKind, g.name, "%w", ctx.Err())
	}
	defer func() { <-g.lock }()
	if g.left == 0 {
		if err := g.reserve(ctx); err != nil {
			return 0, err
		}
	}
	id := g.next
	g.next++
	g.left--
	return id, nil
}

// reserve takes a new block; the caller holds g.lock.
func (g *IdGenerator) reserve(ctx context.Context) error {
	reply, err := g.c.scripts.run(ctx, scriptIDGenNext, []string{g.name, g.allocation}).StringSlice()
	if err != nil {
		return g.err(err)
	}
	if len(reply) != 2 {
		return objectErrorf(idGenKind, g.name, "block reply %q: %w", reply, ErrUnexpectedReply)
	}
	first, err1 := strconv.ParseInt(reply[0], 10, 64)
	size, err2 := strconv.ParseInt(reply[1], 10, 64)
	if err1 != nil || err2 != nil || size < 1 {
		return objectErrorf(idGenKind, g.name, "block reply %q: %w", reply, ErrUnexpectedReply)
	}
	g.next, g.left = first, size
	return nil
}

// Delete deletes the generator's counter and allocation size, and this
// handle's reserved block, and reports whether either key existed. Blocks
// reserved by other handles are still handed out, so ids issued after a
// Delete may repeat earlier ones. It returns ErrEmptyName, ErrInvalidName,
// ErrClientClosed, or a Redis error; ctx.Err() (wrapped) when ctx ends
// while another caller holds the handle.
func (g *IdGenerator) Delete(ctx context.Context) (_ bool, err error) {
	ctx, rec, err := g.open(ctx, opIDDelete)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	select {
	case g.lock <- struct{}{}:
	case <-ctx.Done():
		return false, objectErrorf(idGenKind, g.name, "%w", ctx.Err())
	}
	defer func() { <-g.lock }()
	g.left = 0
	g.c.trip(ctx, 1)
	n, err := g.c.rdb.Del(ctx, g.name, g.allocation).Result()
	return n > 0, intKeyErr(idGenKind, g.name, err)
}
