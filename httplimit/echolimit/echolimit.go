// Package echolimit adapts the httplimit middleware to echo
// (github.com/labstack/echo/v4). It is a module of its own, so that the
// redisson module does not depend on echo.
//
//	limit, err := echolimit.New(client.GetGCRALimiter("api", 100, time.Minute, 20), &httplimit.Options{
//		TrustedProxies: trusted,
//	})
//	e.Use(limit)
//
// Everything httplimit documents holds: the RateLimit fields, 429 with
// Retry-After, fail open or closed within Options.Timeout, and
// httplimit.DecisionFrom(c.Request().Context()) in the handlers.
package echolimit

import (
	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/httplimit"
	"github.com/labstack/echo/v4"
)

// New returns echo middleware that limits requests with l as
// httplimit.New(l, opts) does, and its errors (httplimit.ErrInvalidOptions).
// A request the limiter refuses is answered by Options.Rejected (or
// Unavailable) and the next handler is not called; an allowed one reaches it
// with c.Request() carrying the decision. The middleware is safe for
// concurrent use.
func New(l redisson.KeyedLimiter, opts *httplimit.Options) (echo.MiddlewareFunc, error) {
	mw, err := httplimit.New(l, opts)
	if err != nil {
		return nil, err
	}
	return echo.WrapMiddleware(mw), nil
}
