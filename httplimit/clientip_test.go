package httplimit

import (
	"errors"
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

// singleHeaders are the single-address headers ClientIP can read, as their
// vendors spell them.
var singleHeaders = []string{"X-Real-IP", "CF-Connecting-IP", "True-Client-IP", "Fly-Client-IP"}

// Each single-address header names the client when, and only when, it is
// the configured header and the peer is a trusted proxy (given as a bare
// address); sent twice or holding no address, it is not believed.
func TestClientIPSingleAddressHeaders(t *testing.T) {
	trusted, err := ParseTrusted("10.0.0.1", "2001:db8::1")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range singleHeaders {
		cases := []struct {
			what, remote, configured string
			values                   []string
			want                     string
		}{
			{"trusted proxy", "10.0.0.1:80", h, []string{"203.0.113.7"}, "203.0.113.7"},
			{"trusted ipv6 proxy", "[2001:db8::1]:80", h, []string{"2001:db8:5::9"}, "2001:db8:5::9"},
			{"with port and spaces", "10.0.0.1:80", h, []string{" 203.0.113.7:4711 "}, "203.0.113.7"},
			{"untrusted peer", "192.0.2.9:80", h, []string{"203.0.113.7"}, "192.0.2.9"},
			{"neighbour of the trusted address", "10.0.0.2:80", h, []string{"203.0.113.7"}, "10.0.0.2"},
			{"header not configured", "10.0.0.1:80", "X-Forwarded-For", []string{"203.0.113.7"}, "10.0.0.1"},
			{"sent twice", "10.0.0.1:80", h, []string{"198.51.100.1", "203.0.113.7"}, "10.0.0.1"},
			{"not an address", "10.0.0.1:80", h, []string{"203.0.113.7, 198.51.100.1"}, "10.0.0.1"},
			{"absent", "10.0.0.1:80", h, nil, "10.0.0.1"},
		}
		for _, tc := range cases {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tc.remote
			for _, v := range tc.values {
				r.Header.Add(h, v)
			}
			got, err := ClientIP(r, trusted, tc.configured)
			if err != nil || got.String() != tc.want {
				t.Errorf("%s, %s: ClientIP = %v, %v; want %s", h, tc.what, got, err, tc.want)
			}
		}
	}
}

func TestParseTrusted(t *testing.T) {
	got, err := ParseTrusted("10.0.0.0/8, 192.0.2.7", "", "2001:db8::1", " fd00::/8 ,")
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"),
		netip.MustParsePrefix("2001:db8::1/128"), netip.MustParsePrefix("fd00::/8"),
	}
	if len(got) != len(want) {
		t.Fatalf("ParseTrusted = %v; want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("ParseTrusted[%d] = %v; want %v", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"10.0.0", "fe80::1%eth0", "10.0.0.0/33", "proxy.local"} {
		if _, err := ParseTrusted(bad); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("ParseTrusted(%q): err = %v; want ErrInvalidOptions", bad, err)
		}
	}
}
