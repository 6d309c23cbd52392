// Package ginlimit adapts the httplimit middleware to gin
// (github.com/gin-gonic/gin). It is a module of its own, so that the
// redisson module does not depend on gin.
//
//	limit, err := ginlimit.New(client.GetGCRALimiter("api", 100, time.Minute, 20), &httplimit.Options{
//		TrustedProxies: trusted,
//	})
//	router.Use(limit)
//
// Everything httplimit documents holds: the RateLimit fields, 429 with
// Retry-After, fail open or closed within Options.Timeout, and
// httplimit.DecisionFrom(c.Request.Context()) in the handlers.
package ginlimit

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/httplimit"
)

// New returns gin middleware that limits requests with l as
// httplimit.New(l, opts) does, and its errors (httplimit.ErrInvalidOptions).
// A request the limiter refuses is answered by Options.Rejected (or
// Unavailable) and the chain is aborted; an allowed one continues with
// c.Request carrying the decision. The middleware is safe for concurrent
// use.
func New(l redisson.KeyedLimiter, opts *httplimit.Options) (gin.HandlerFunc, error) {
	mw, err := httplimit.New(l, opts)
	if err != nil {
		return nil, err
	}
	return Wrap(mw), nil
}

// Wrap adapts net/http middleware of the shape httplimit.New returns to gin:
// when mw calls its next handler the gin chain continues (with the request
// mw passed on, and the writer: a middleware that captures the response,
// as httplimit.NewIdempotency does, gets what the gin handlers write),
// otherwise it is aborted after mw has answered.
func Wrap(mw func(http.Handler) http.Handler) gin.HandlerFunc {
	return func(c *gin.Context) {
		passed := false
		orig := c.Writer
		mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			passed = true
			c.Request = r
			if w != http.ResponseWriter(orig) {
				c.Writer = &writer{ResponseWriter: orig, w: w, status: http.StatusOK, size: -1}
				defer func() { c.Writer = orig }()
			}
			c.Next()
		})).ServeHTTP(orig, c.Request)
		if !passed {
			c.Abort()
		}
	}
}
