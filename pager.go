package redisson

import "context"

// pager is the one paging loop of every iterator: scan for a cursor scan
// (SSCAN, ZSCAN, HSCAN, and SCAN for ListObjects), ranges for pages by
// index (LRANGE: List and Queue). Before the first page it checks the
// object and the batch size (below 1 is ErrInvalidBatch) and reports a
// refusal to the Observer as the operation op; each page is then one
// operation op, so the caller's loop body is not counted as its time.
type pager struct {
	c      *Client
	kind   string // the object's kind in errors
	opKind string // the kind the Observer sees (a MapCache's: map_cache)
	name   string
	op     string // the operation of one page; "" is not observed (ListObjects)
	batch  int
	check  func() error      // the object's own checks: name, client closed
	wrap   func(error) error // names the object in a page's error
}

// start checks the object and the batch size.
func (p *pager) start(ctx context.Context) error {
	err := p.check()
	if err == nil && p.batch < 1 {
		err = objectErr(p.kind, p.name, invalidOption(ErrInvalidBatch, "batch", p.batch, "at least 1"))
	}
	if err != nil && p.op != "" {
		p.c.reject(ctx, p.opKind, p.name, p.op, err)
	}
	return err
}

// read runs one page's round trip as one operation.
func (p *pager) read(ctx context.Context, read func(context.Context) error) error {
	if p.op == "" {
		return p.wrap(read(ctx))
	}
	pctx, rec := p.c.begin(ctx, p.opKind, p.name, p.op)
	p.c.trip(pctx, 1)
	err := read(pctx)
	if err != nil {
		err = p.wrap(err)
	}
	rec.end(err, OutcomeOK)
	return err
}

// scan runs a cursor scan page by page, handing each page to each, until
// the cursor is back at 0, each says stop, or an error.
func (p *pager) scan(ctx context.Context,
	read func(ctx context.Context, cursor uint64, count int64) ([]string, uint64, error),
	each func(page []string) (bool, error)) error {
	if err := p.start(ctx); err != nil {
		return err
	}
	_, err := p.cursor(ctx, read, each)
	return err
}

// cursor is scan without the checks, for a walk of several scans (one per
// master); it reports whether the scan ran to its end.
func (p *pager) cursor(ctx context.Context,
	read func(ctx context.Context, cursor uint64, count int64) ([]string, uint64, error),
	each func(page []string) (bool, error)) (bool, error) {
	var cursor uint64
	for {
		var page []string
		var next uint64
		err := p.read(ctx, func(ctx context.Context) (err error) {
			page, next, err = read(ctx, cursor, int64(p.batch))
			return err
		})
		if err != nil {
			return false, err
		}
		if more, err := each(page); err != nil || !more {
			return false, err
		}
		if next == 0 {
			return true, nil
		}
		cursor = next
	}
}

// ranges reads pages of batch elements by index from 0 (read gets the
// first and last index, both included), handing each page and the index
// of its first element to each, until a page comes back short, each says
// stop, or an error.
func (p *pager) ranges(ctx context.Context,
	read func(ctx context.Context, start, stop int64) ([]string, error),
	each func(start int64, page []string) (bool, error)) error {
	if err := p.start(ctx); err != nil {
		return err
	}
	for from := int64(0); ; from += int64(p.batch) {
		var page []string
		err := p.read(ctx, func(ctx context.Context) (err error) {
			page, err = read(ctx, from, from+int64(p.batch)-1)
			return err
		})
		if err != nil {
			return err
		}
		if more, err := each(from, page); err != nil || !more {
			return err
		}
		if len(page) < p.batch {
			return nil
		}
	}
}

// pager returns the pager of one of o's iterators, each page an operation
// op.
func (o *base) pager(op string, batch int) *pager {
	return &pager{c: o.c, kind: o.kind, opKind: o.opKind, name: o.name, op: op, batch: batch, check: o.check, wrap: o.wrap}
}
