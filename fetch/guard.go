package fetch

import (
	"fmt"
	"net/netip"
)

// Guard decides which IP addresses the Fetcher may connect to. The zero
// value is not usable; build one with NewGuard.
//
// By default every address that is not globally routable is refused:
// loopback, private (RFC 1918, RFC 4193), link-local (including the cloud
// metadata address 169.254.169.254), carrier-grade NAT (RFC 6598), multicast,
// unspecified, broadcast, documentation and benchmarking ranges, and IPv6
// forms that embed one of those IPv4 addresses (IPv4-mapped, IPv4-compatible,
// NAT64 per RFC 6052, 6to4 per RFC 3056, and Teredo per RFC 4380, whose
// server and client addresses must both be public). Addresses inside one of
// the allowed prefixes pass regardless, which is how tests, a local
// synthetic web or an intranet crawl opt in.
//
// The guard is applied to the address actually dialled (or, with a custom
// dial function, to the connection's remote address before anything is
// written), never to the host name, so DNS rebinding and redirects to
// internal names are caught.
type Guard struct {
	allow []netip.Prefix
}

// NewGuard returns a guard that refuses non-public addresses except those in
// allow.
func NewGuard(allow ...netip.Prefix) *Guard {
	g := &Guard{allow: make([]netip.Prefix, 0, len(allow))}
	for _, p := range allow {
		g.allow = append(g.allow, p.Masked())
	}
	return g
}

type blockedRange struct {
	prefix netip.Prefix
	reason string
}

// blockedRanges lists the special-purpose ranges of the IANA IPv4 and IPv6
// Special-Purpose Address Registries (RFC 6890) that a crawler must not
// reach. IPv6 ranges that embed an IPv4 address are handled by embeddedV4.
var blockedRanges = func() []blockedRange {
	list := []struct{ cidr, reason string }{
		{"0.0.0.0/8", "unspecified"}, // "this network", RFC 791; 0.0.0.0 dials the local host
		{"10.0.0.0/8", "private"},
		{"100.64.0.0/10", "carrier-grade NAT"}, // RFC 6598
		{"127.0.0.0/8", "loopback"},
		{"169.254.0.0/16", "link-local"}, // RFC 3927; holds 169.254.169.254 metadata services
		{"172.16.0.0/12", "private"},
		{"192.0.0.0/24", "IETF protocol assignment"},
		{"192.0.2.0/24", "documentation"},
		{"192.88.99.0/24", "6to4 relay anycast"},
		{"192.168.0.0/16", "private"},
		{"198.18.0.0/15", "benchmarking"},
		{"198.51.100.0/24", "documentation"},
		{"203.0.113.0/24", "documentation"},
		{"224.0.0.0/4", "multicast"},
		{"240.0.0.0/4", "reserved"}, // includes 255.255.255.255 broadcast
		{"::/128", "unspecified"},
		{"::1/128", "loopback"},
		{"100::/64", "discard-only"},
		{"2001:2::/48", "benchmarking"}, // RFC 5180
		{"2001:db8::/32", "documentation"},
		{"3fff::/20", "documentation"}, // RFC 9637
		{"fc00::/7", "private"},        // unique local, RFC 4193
		{"fe80::/10", "link-local"},
		{"fec0::/10", "site-local"}, // deprecated by RFC 3879 but still routed internally
		{"ff00::/8", "multicast"},
	}
	out := make([]blockedRange, len(list))
	for i, r := range list {
		out[i] = blockedRange{netip.MustParsePrefix(r.cidr), r.reason}
	}
	return out
}()

var (
	nat64Prefix      = netip.MustParsePrefix("64:ff9b::/96")   // RFC 6052 well-known prefix
	nat64LocalPrefix = netip.MustParsePrefix("64:ff9b:1::/48") // RFC 8215 local-use prefix
	sixToFourPrefix  = netip.MustParsePrefix("2002::/16")      // RFC 3056
	v4CompatPrefix   = netip.MustParsePrefix("::/96")          // deprecated IPv4-compatible, RFC 4291 §2.5.5.1
	teredoPrefix     = netip.MustParsePrefix("2001::/32")      // RFC 4380
)

// teredoV4 returns the two IPv4 addresses a Teredo address (RFC 4380 §4)
// carries: the Teredo server's in bits 32..63 and the client's public
// address, bit-inverted, in bits 96..127. A host with a Teredo interface
// sends UDP to both, so each must be public.
func teredoV4(a netip.Addr) (server, client netip.Addr, ok bool) {
	if !a.Is6() || a.Is4In6() || !teredoPrefix.Contains(a) {
		return netip.Addr{}, netip.Addr{}, false
	}
	b := a.As16()
	server = netip.AddrFrom4([4]byte{b[4], b[5], b[6], b[7]})
	client = netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
	return server, client, true
}

// embeddedV4 returns the IPv4 address an IPv6 address carries in one of the
// standard embeddings, so that ::ffff:127.0.0.1, ::127.0.0.1,
// 64:ff9b::a9fe:a9fe and 2002:7f00:1:: are judged as the IPv4 address they
// reach.
func embeddedV4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	if a.Is4In6() {
		return a.Unmap(), true
	}
	b := a.As16()
	switch {
	case nat64Prefix.Contains(a), v4CompatPrefix.Contains(a) && a != netip.IPv6Unspecified() && a != netip.IPv6Loopback():
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case sixToFourPrefix.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	case nat64LocalPrefix.Contains(a):
		// RFC 6052 §2.2 with a /48 prefix: the IPv4 address occupies bits
		// 48..63 and 72..87 around the reserved u octet (bits 64..71).
		return netip.AddrFrom4([4]byte{b[6], b[7], b[9], b[10]}), true
	}
	return netip.Addr{}, false
}

// Classify reports why a is not publicly routable, or "" if it is. It
// ignores the allow-list.
func Classify(a netip.Addr) string {
	a = a.WithZone("")
	if !a.IsValid() {
		return "invalid"
	}
	if v4, ok := embeddedV4(a); ok {
		if r := Classify(v4); r != "" {
			return r + " (embedded in IPv6)"
		}
		return ""
	}
	if server, client, ok := teredoV4(a); ok {
		if r := Classify(server); r != "" {
			return r + " (Teredo server)"
		}
		if r := Classify(client); r != "" {
			return r + " (Teredo client)"
		}
		return ""
	}
	for _, r := range blockedRanges {
		if r.prefix.Contains(a) {
			return r.reason
		}
	}
	return ""
}

// Allowed reports whether a is in one of the guard's allowed prefixes.
func (g *Guard) Allowed(a netip.Addr) bool {
	a = a.WithZone("")
	for _, p := range g.allow {
		if p.Contains(a) {
			return true
		}
	}
	if a.Is4In6() {
		return g.Allowed(a.Unmap())
	}
	return false
}

// Check returns nil if the Fetcher may connect to a, or a
// *BlockedAddressError (matching ErrBlockedAddress) naming host and the class
// of address. A nil *Guard permits everything.
func (g *Guard) Check(host string, a netip.Addr) error {
	if g == nil || g.Allowed(a) {
		return nil
	}
	if reason := Classify(a); reason != "" {
		return &BlockedAddressError{Host: host, Addr: a.WithZone(""), Reason: reason}
	}
	return nil
}

// String describes the guard's allow-list, for logs.
func (g *Guard) String() string {
	if g == nil {
		return "guard off"
	}
	return fmt.Sprintf("guard on, allow %v", g.allow)
}
