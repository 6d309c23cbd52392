package httplimit

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

// A client cannot leave its own bucket with a malformed Forwarded value:
// RFC 7239 proxies append their element to the field value the client sent
// (same line), so an unterminated quote in the client's part must not
// swallow the element the trusted proxy appended.
func TestClientIPForwardedUnbalancedQuoteKeepsProxyElement(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, sent := range []string{`for="`, `for="1.1.1.1`, `for=x;by="a\`, `"`} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = "10.0.0.1:80"
		r.Header.Set("Forwarded", sent+", for=203.0.113.7") // the proxy's append
		got, err := ClientIP(r, trusted, "Forwarded")
		if err != nil || got.String() != "203.0.113.7" {
			t.Errorf("client sent Forwarded %s: ClientIP = %v, %v; want 203.0.113.7 (the address the proxy appended)", sent, got, err)
		}
	}
}

// A trusted proxy listed in IPv4-mapped form (as a dual-stack listener
// shows it in RemoteAddr) is still trusted: ClientIP unmaps the addresses
// it compares, so a mapped prefix must match their IPv4 form. Otherwise the
// header is ignored and every client behind the proxy shares its bucket.
func TestClientIPTrustedMappedPrefix(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("::ffff:10.0.0.0/104")}
	for _, remote := range []string{"[::ffff:10.0.0.1]:80", "10.0.0.1:80"} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = remote
		r.Header.Set("X-Forwarded-For", "203.0.113.7")
		got, err := ClientIP(r, trusted, "X-Forwarded-For")
		if err != nil || got.String() != "203.0.113.7" {
			t.Errorf("peer %s, trusted ::ffff:10.0.0.0/104: ClientIP = %v, %v; want 203.0.113.7", remote, got, err)
		}
	}
}
