package ginlimit

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// writer is the gin.ResponseWriter of the handlers behind a middleware that
// passed them a writer of its own (w): what they write goes to w, with
// gin's semantics (WriteHeader only records the status, the first Write or
// WriteHeaderNow sends it). Hijack, CloseNotify and Pusher stay the
// original writer's.
type writer struct {
	gin.ResponseWriter // the original
	w                  http.ResponseWriter
	status             int
	size               int // -1 until the header is sent
}

func (x *writer) Header() http.Header { return x.w.Header() }

func (x *writer) WriteHeader(code int) {
	if code > 0 && !x.Written() {
		x.status = code
	}
}

func (x *writer) WriteHeaderNow() {
	if !x.Written() {
		x.size = 0
		x.w.WriteHeader(x.status)
	}
}

func (x *writer) Write(b []byte) (int, error) {
	x.WriteHeaderNow()
	n, err := x.w.Write(b)
	x.size += n
	return n, err
}

func (x *writer) WriteString(s string) (int, error) { return x.Write([]byte(s)) }

func (x *writer) Status() int { return x.status }

func (x *writer) Size() int { return x.size }

func (x *writer) Written() bool { return x.size != -1 }

func (x *writer) Flush() {
	x.WriteHeaderNow()
	if f, ok := x.w.(http.Flusher); ok {
		f.Flush()
	}
}
