package httplimit

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
)

// Header names ClientIP reads. X-Forwarded-For and Forwarded are lists
// that each proxy appends to; the others hold one address, set (replacing
// whatever the client sent) by the proxy or CDN that names them: X-Real-IP
// (nginx), CF-Connecting-IP (Cloudflare), True-Client-IP (Akamai,
// Cloudflare), Fly-Client-IP (Fly.io).
const (
	headerXFF       = "X-Forwarded-For"
	headerForwarded = "Forwarded"
	headerRealIP    = "X-Real-Ip"        // canonical form of X-Real-IP
	headerCF        = "Cf-Connecting-Ip" // CF-Connecting-IP
	headerTrueIP    = "True-Client-Ip"   // True-Client-IP
	headerFly       = "Fly-Client-Ip"    // Fly-Client-IP
)

// singleAddress lists the headers that hold one address, by canonical name.
var singleAddress = map[string]bool{headerRealIP: true, headerCF: true, headerTrueIP: true, headerFly: true}

// knownHeader returns the canonical form of a header ClientIP can read and
// reports whether it is one.
func knownHeader(name string) (string, bool) {
	c := http.CanonicalHeaderKey(name)
	return c, c == headerXFF || c == headerForwarded || singleAddress[c]
}

// ClientIP returns the address of the client that sent r. The peer
// (r.RemoteAddr) is the client unless it lies in one of trusted; only then
// is header read:
//
//   - "X-Forwarded-For" or "Forwarded" (every occurrence in order): read
//     from the right, skipping addresses of trusted proxies, and the first
//     other address is the client. An entry that is not an IP address
//     ("unknown", an obfuscated RFC 7239 node) stops the walk: the trusted
//     proxy that wrote it is returned. When every entry is a trusted
//     proxy, the left-most one is returned. Entries left of the client were
//     written by the client and are never used.
//   - "X-Real-IP", "CF-Connecting-IP", "True-Client-IP" or "Fly-Client-IP"
//     (any case): the one address it holds is the client. The proxy that
//     sets it replaces what the client sent, so a request carrying it more
//     than once, or holding no IP address, is not trusted: the peer is
//     returned.
//
// IPv4-mapped IPv6 addresses are returned as IPv4, zones dropped. It
// returns ErrNoClientIP when RemoteAddr holds no IP address. An unknown
// header name is read as X-Forwarded-For.
func ClientIP(r *http.Request, trusted []netip.Prefix, header string) (netip.Addr, error) {
	peer, ok := parseHost(r.RemoteAddr)
	if !ok {
		return netip.Addr{}, fmt.Errorf("%w: RemoteAddr %q", ErrNoClientIP, r.RemoteAddr)
	}
	if !isTrusted(peer, trusted) {
		return peer, nil
	}
	header = http.CanonicalHeaderKey(header)
	if singleAddress[header] {
		vs := r.Header.Values(header)
		if len(vs) != 1 {
			return peer, nil
		}
		if ip, ok := parseHost(strings.TrimSpace(vs[0])); ok {
			return ip, nil
		}
		return peer, nil
	}
	var hops []string
	if header == headerForwarded {
		hops = forwardedFor(r.Header.Values(headerForwarded))
	} else {
		for _, v := range r.Header.Values(headerXFF) {
			hops = append(hops, strings.Split(v, ",")...)
		}
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		ip, ok := parseHost(strings.TrimSpace(hops[i]))
		if !ok {
			return client, nil
		}
		client = ip
		if !isTrusted(ip, trusted) {
			return ip, nil
		}
	}
	return client, nil
}

// ParseTrusted parses a list of trusted proxies for Options.TrustedProxies:
// each element is a network ("10.0.0.0/8", "fd00::/8") or a single address
// ("10.0.0.1" meaning 10.0.0.1/32, "2001:db8::1" meaning /128), and may
// itself be a comma-separated list ("10.0.0.0/8, 192.0.2.7"); blank
// entries are skipped. It returns ErrInvalidOptions naming the first entry
// that is neither.
func ParseTrusted(list ...string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, l := range list {
		for _, s := range strings.Split(l, ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			if p, err := netip.ParsePrefix(s); err == nil {
				out = append(out, p)
				continue
			}
			ip, err := netip.ParseAddr(s)
			if err != nil || ip.Zone() != "" {
				return nil, fmt.Errorf("%w: trusted proxy %q is neither an address nor a network", ErrInvalidOptions, s)
			}
			out = append(out, netip.PrefixFrom(ip, ip.BitLen()))
		}
	}
	return out, nil
}

// isTrusted reports whether ip (unmapped, see norm) lies in trusted; a
// prefix written in IPv4-mapped IPv6 form matches the IPv4 address too.
func isTrusted(ip netip.Addr, trusted []netip.Prefix) bool {
	mapped := netip.AddrFrom16(ip.As16())
	for _, p := range trusted {
		if p.Contains(ip) || (ip.Is4() && p.Addr().Is4In6() && p.Contains(mapped)) {
			return true
		}
	}
	return false
}

// parseHost parses an IP address with or without a port, IPv6 with or
// without brackets.
func parseHost(s string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return norm(ap.Addr()), true
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	if ip, err := netip.ParseAddr(s); err == nil {
		return norm(ip), true
	}
	return netip.Addr{}, false
}

func norm(ip netip.Addr) netip.Addr { return ip.Unmap().WithZone("") }

// forwardedFor returns the for= value of every element of the Forwarded
// field values, in order; an element without for= gives "" (not an
// address).
func forwardedFor(values []string) []string {
	var out []string
	for _, v := range values {
		elems, ok := splitQuoted(v, ',')
		if !ok {
			// A quote left open (by the client: proxies append their
			// element to the value it sent) would hide every element
			// after it, the proxies' included; quoted values hold no
			// comma worth keeping, so split at every one.
			elems = strings.Split(v, ",")
		}
		for _, elem := range elems {
			node := ""
			pairs, _ := splitQuoted(elem, ';')
			for _, pair := range pairs {
				k, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if ok && strings.EqualFold(strings.TrimSpace(k), "for") {
					node = unquote(strings.TrimSpace(val))
				}
			}
			out = append(out, node)
		}
	}
	return out
}

// splitQuoted splits s at sep outside double-quoted strings, and reports
// whether every quoted string was closed.
func splitQuoted(s string, sep byte) ([]string, bool) {
	var parts []string
	quoted, escaped, start := false, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case escaped:
			escaped = false
		case quoted && c == '\\':
			escaped = true
		case c == '"':
			quoted = !quoted
		case !quoted && c == sep:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:]), !quoted
}

// unquote removes the double quotes (and backslash escapes) of an RFC 7230
// quoted-string; other values are returned as they are.
func unquote(s string) string {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return s
	}
	var b strings.Builder
	for i := 1; i < len(s)-1; i++ {
		if s[i] == '\\' && i+1 < len(s)-1 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
