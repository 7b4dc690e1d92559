package urlnorm

import (
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// hostOptions are the host and port transforms of the Crawler profile, the
// ones Host and HostOf apply.
var hostOptions = Config{
	AddDefaultScheme:      true,
	RemoveUserinfo:        true,
	LowercaseHost:         true,
	DecodeHostEscapes:     true,
	IDNToPunycode:         true,
	CanonicalIPv4:         true,
	CanonicalIPv6:         true,
	RemoveHostTrailingDot: true,
	RemoveDefaultPort:     true,
	RemoveEmptyPort:       true,
}

// Host returns the host of u the way the Crawler profile writes it, with
// the port when it is not the scheme's default: lower case, punycode for
// internationalized names, canonical IP addresses, no trailing dot
// ("example.com", "example.com:8080", "[::1]:8443", "xn--bcher-kva.de").
// Host strings name a site for politeness and partitioning.
//
// If u's host is invalid, Host returns it lower-cased as it is.
func Host(u *url.URL) string {
	scheme := u.Scheme
	special := equalFold(scheme, "http") || equalFold(scheme, "https")
	if special {
		scheme = strings.ToLower(scheme)
	}
	var e engine
	e.init(&hostOptions)
	var buf [128]byte
	b, err := e.appendAuthority(buf[:0], u.Host, scheme, special, u.Host)
	if err != nil {
		return strings.ToLower(u.Host)
	}
	if string(b) == u.Host {
		return u.Host
	}
	return string(b)
}

// HostOf returns Host of the URL rawURL, parsed as Normalize parses it
// (a scheme-less "example.com/x" is taken as http). The error is the one
// Normalize would return for a malformed authority or an unsupported
// scheme.
func HostOf(rawURL string) (string, error) {
	var e engine
	e.init(&hostOptions)
	if e.maxLen > 0 && len(rawURL) > e.maxLen {
		return "", newError(ErrTooLong, rawURL, "URL too long")
	}
	scheme, rest, special, err := e.splitInput(rawURL, cleanInput(rawURL))
	if err != nil {
		return "", err
	}
	end := len(rest)
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; c == '/' || c == '?' || c == '#' || (special && c == '\\') {
			end = i
			break
		}
	}
	var buf [128]byte
	b, err := e.appendAuthority(buf[:0], rest[:end], scheme, special, rawURL)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// RegistrableDomain returns the registrable domain of host, its effective
// top-level domain plus one label ("eTLD+1"), from the public suffix list
// compiled into golang.org/x/net/publicsuffix (ICANN and private sections:
// "a.b.example.co.uk" gives "example.co.uk", "x.user.github.io" gives
// "user.github.io"). host is a Host value; a port is ignored. An IP
// address is its own registrable domain. A host that is itself a public
// suffix, or a single label such as "localhost", has none: the error wraps
// ErrInvalid.
func RegistrableDomain(host string) (string, error) {
	h := host
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return "", invalid(host, "unterminated IPv6 address")
		}
		return h[:end+1], nil
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		h = h[:i]
	}
	h = strings.TrimSuffix(h, ".")
	if h == "" {
		return "", invalid(host, "empty host")
	}
	if a, err := netip.ParseAddr(h); err == nil && a.Is4() {
		return h, nil
	}
	for i := 0; i < len(h); i++ {
		if 'A' <= h[i] && h[i] <= 'Z' {
			h = strings.ToLower(h)
			break
		}
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(h)
	if err != nil {
		return "", invalid(host, "no registrable domain ("+err.Error()+")")
	}
	return d, nil
}

// Key returns a 64-bit hash of a normalized URL, for deduplication sets
// and partitioning. The function is XXH64 (xxHash, 64-bit variant, seed 0)
// of the string's bytes, as specified at
// https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md; any
// XXH64 implementation, in any language, computes the same value (for
// example github.com/cespare/xxhash/v2 Sum64String). It will not change
// between processes or releases. Key does not allocate.
//
// Key hashes the bytes it is given: normalize first, so that spellings of
// one URL share a key.
func Key(normalizedURL string) uint64 { return xxh64(normalizedURL) }

// HostKey returns the 64-bit hash of a Host value, for partitioning work
// by host: XXH64 with seed 0, like Key. It does not allocate.
func HostKey(host string) uint64 { return xxh64(host) }

// XXH64 constants (xxHash specification, "XXH64 algorithm").
const (
	prime64x1 uint64 = 11400714785074694791
	prime64x2 uint64 = 14029467366897019727
	prime64x3 uint64 = 1609587929392839161
	prime64x4 uint64 = 9650029242287828579
	prime64x5 uint64 = 2870177450012600261
)

func rotl64(x uint64, r uint) uint64 { return x<<r | x>>(64-r) }

func xxhRound(acc, input uint64) uint64 {
	acc += input * prime64x2
	return rotl64(acc, 31) * prime64x1
}

func xxhMerge(acc, val uint64) uint64 {
	acc ^= xxhRound(0, val)
	return acc*prime64x1 + prime64x4
}

func le64(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

func le32(s string, i int) uint64 {
	_ = s[i+3]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24
}

// xxh64 is XXH64 with seed 0.
func xxh64(s string) uint64 {
	n := len(s)
	p := 0
	var h uint64
	if n >= 32 {
		v1 := prime64x1
		v1 += prime64x2
		v2 := prime64x2
		v3 := uint64(0)
		v4 := uint64(0)
		v4 -= prime64x1
		for ; p+32 <= n; p += 32 {
			v1 = xxhRound(v1, le64(s, p))
			v2 = xxhRound(v2, le64(s, p+8))
			v3 = xxhRound(v3, le64(s, p+16))
			v4 = xxhRound(v4, le64(s, p+24))
		}
		h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18)
		h = xxhMerge(h, v1)
		h = xxhMerge(h, v2)
		h = xxhMerge(h, v3)
		h = xxhMerge(h, v4)
	} else {
		h = prime64x5
	}
	h += uint64(n)
	for ; p+8 <= n; p += 8 {
		h ^= xxhRound(0, le64(s, p))
		h = rotl64(h, 27)*prime64x1 + prime64x4
	}
	if p+4 <= n {
		h ^= le32(s, p) * prime64x1
		h = rotl64(h, 23)*prime64x2 + prime64x3
		p += 4
	}
	for ; p < n; p++ {
		h ^= uint64(s[p]) * prime64x5
		h = rotl64(h, 11) * prime64x1
	}
	h ^= h >> 33
	h *= prime64x2
	h ^= h >> 29
	h *= prime64x3
	h ^= h >> 32
	return h
}
