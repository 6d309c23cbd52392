package redisson

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// reliableReader is one subscriber's loop: read, hand over, acknowledge.
type reliableReader[T any] struct {
	t       *ReliableTopic[T]
	s       *ReliableSubscription
	o       subscriberOptions
	deliver func(context.Context, T) bool
}

func (r *reliableReader[T]) report(err error) {
	if r.o.onError != nil && err != nil {
		r.o.onError(err)
	}
}

// run reads until stop (Close) or closing (Client.Close) ends, then, unless
// the subscriber keeps its position, removes it within CleanupTimeout.
func (r *reliableReader[T]) run(stop, closing context.Context) {
	defer close(r.s.done)
	ctx, cancel := context.WithCancel(stop)
	defer cancel()
	go func() {
		select {
		case <-closing.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	r.loop(ctx)
	if r.s.remove.Load() || !r.s.keep {
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), r.t.c.opts.CleanupTimeout)
		r.report(r.t.unregister(cctx, r.s.id))
		ccancel()
	}
}

func (r *reliableReader[T]) loop(ctx context.Context) {
	from := "0" // first the entries delivered before and not acknowledged
	refreshEvery := r.o.timeout / 3
	lastRefresh := time.Now()
	block := min(reliableBlock, refreshEvery)
	for ctx.Err() == nil {
		msgs, err := r.t.readGroup(ctx, r.s.id, from, reliableBatch, block)
		if isNoGroup(err) {
			r.reregister(ctx)
			from = "0"
			continue
		}
		if err != nil {
			if ctx.Err() == nil {
				r.report(err)
				pause(ctx, time.Second)
			}
			continue
		}
		if from == "0" && len(msgs) < reliableBatch {
			from = ">"
		}
		ids := r.handle(ctx, msgs)
		if len(ids) == 0 && time.Since(lastRefresh) < refreshEvery {
			continue
		}
		// Acknowledge even when ctx has ended: what was handled is done.
		sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), r.t.c.opts.CleanupTimeout)
		ok, err := r.t.settle(sctx, r.s.id, r.o.timeout, ids)
		scancel()
		switch {
		case err != nil:
			r.report(err)
			from = "0" // what was not acknowledged comes again
		case !ok:
			r.reregister(ctx)
			from = "0"
		default:
			lastRefresh = time.Now()
		}
	}
}

// handle hands msgs over in order and returns the ids to acknowledge: the
// handled ones and the ones that do not decode (reported).
func (r *reliableReader[T]) handle(ctx context.Context, msgs []redis.XMessage) []string {
	var ids []string
	for _, m := range msgs {
		if ctx.Err() != nil {
			break
		}
		raw, ok := m.Values["m"].(string)
		if !ok {
			r.undecodable(r.t.errorf("%w: entry %s has no field m", ErrCodec, m.ID))
			ids = append(ids, m.ID)
			continue
		}
		v, err := decodeValue[T](r.t.codec, r.t.object, []byte(raw))
		if err != nil {
			r.undecodable(err)
			ids = append(ids, m.ID)
			continue
		}
		if !r.deliver(ctx, v) {
			break
		}
		r.s.handled.Add(1)
		ids = append(ids, m.ID)
	}
	return ids
}

// undecodable reports a message that is skipped because it does not
// decode: counted (DecodeErrors), given to the subscriber's error callback
// and reported as an event, so that nothing is dropped silently.
func (r *reliableReader[T]) undecodable(err error) {
	r.s.decodeErr.Add(1)
	r.report(err)
	r.t.c.emit.emit(Event{Type: EventMessageUndecodable, Kind: r.t.kind, Name: r.t.name, Owner: r.s.id, Err: err})
}

// reregister subscribes again under the same id after the subscriber lost
// its registration (its timeout ran out while it could not refresh).
func (r *reliableReader[T]) reregister(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	r.report(r.t.errorf("%w: subscriber %s", ErrSubscriberExpired, r.s.id))
	if _, err := r.t.register(ctx, r.s.id, r.o.timeout); err != nil && ctx.Err() == nil {
		r.report(err)
		pause(ctx, time.Second)
	}
}

// pause sleeps d or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
