package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// RedisError is an error reply ("-ERR ...") returned by Server.Do.
type RedisError string

// Error returns the error reply without the leading '-'.
func (e RedisError) Error() string { return string(e) }

// do sends one command to addr on a fresh connection, using RESP2, and
// returns the decoded reply: string (simple and bulk strings), int64, nil
// (null), []any (arrays) or a RedisError as the error. It starts no
// goroutines; the connection is closed before returning. Without a deadline
// in ctx, a 5 s timeout applies.
func do(ctx context.Context, addr string, args ...string) (any, error) {
	if len(args) == 0 {
		return nil, errors.New("redistest: do: no command")
	}
	d := net.Dialer{Timeout: 2 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(5 * time.Second)
	}
	if err := conn.SetDeadline(deadline); err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(conn, b.String()); err != nil {
		return nil, err
	}
	return readReply(bufio.NewReader(conn))
}

// readReply decodes one RESP2 reply.
func readReply(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if line == "" {
		return nil, errors.New("redistest: empty reply line")
	}
	body := line[1:]
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return nil, RedisError(body)
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			v, err := readReply(r)
			var re RedisError
			if err != nil && !errors.As(err, &re) {
				return nil, err
			}
			if err != nil {
				v = re
			}
			out[i] = v
		}
		return out, nil
	default:
		return nil, fmt.Errorf("redistest: unexpected reply %q", line)
	}
}

// infoMap runs a command whose reply is an INFO-style "key:value" text (INFO,
// CLUSTER INFO) and parses it.
func infoMap(ctx context.Context, addr string, args ...string) (map[string]string, error) {
	v, err := do(ctx, addr, args...)
	if err != nil {
		return nil, err
	}
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("redistest: %s: unexpected reply %T", strings.Join(args, " "), v)
	}
	m := make(map[string]string)
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
			m[k] = v
		}
	}
	return m, nil
}
