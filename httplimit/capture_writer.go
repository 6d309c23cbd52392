package httplimit

import (
	"bytes"
	"net/http"
)

// captureWriter buffers a run's response, up to max bytes of body; beyond
// it, it spills: what it buffered and the rest go to w as written.
type captureWriter struct {
	w       http.ResponseWriter
	header  http.Header
	status  int
	body    bytes.Buffer
	max     int64
	spilled bool
}

func (c *captureWriter) Header() http.Header { return c.header }

func (c *captureWriter) WriteHeader(code int) {
	if c.status == 0 && code >= 200 { // informational statuses are not kept
		c.status = code
	}
}

func (c *captureWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	if c.spilled {
		return c.w.Write(p)
	}
	if int64(c.body.Len()+len(p)) <= c.max {
		return c.body.Write(p)
	}
	c.spilled = true
	c.send(c.status)
	return c.w.Write(p)
}

// send writes the status, headers and buffered body to w.
func (c *captureWriter) send(status int) {
	for k, v := range c.header {
		c.w.Header()[k] = v
	}
	c.w.WriteHeader(status)
	c.w.Write(c.body.Bytes())
	c.body.Reset()
}
