package urlnorm

import (
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// idnaProfile is the URL Standard's "domain to ASCII" (UTS #46 with
// CheckHyphens, UseSTD3ASCIIRules and VerifyDnsLength false, CheckBidi and
// CheckJoiners true, nontransitional). It is immutable once built.
var idnaProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.Transitional(false),
	idna.CheckHyphens(false),
	idna.StrictDomainName(false),
	idna.VerifyDNSLength(false),
)

// appendHost writes the host h of an authority to b under the engine's
// options. input is the whole URL, for error messages.
func (e *engine) appendHost(b []byte, h string, special bool, input string) ([]byte, error) {
	o := e.o
	if h == "" {
		if special {
			return b, invalid(input, "empty host")
		}
		return b, nil
	}
	if h[0] == '[' {
		return e.appendIPv6(b, h, input)
	}

	// Fast path: a host of lower-case letters, digits, '-', '.', '_' needs
	// no decoding, mapping or validation beyond the dot and IP rules.
	plain := true
	for i := 0; i < len(h); i++ {
		if charClass[h[i]]&cPlainHost == 0 {
			plain = false
			break
		}
	}
	idn := e.whatwg || o.IDNToPunycode
	strict := e.whatwg || o.DecodeHostEscapes || o.IDNToPunycode
	start := len(b)
	if plain && !(idn && hasACELabel(h)) {
		b = append(b, h...)
	} else {
		s := h
		if (e.whatwg || o.DecodeHostEscapes) && strings.IndexByte(s, '%') >= 0 {
			s = percentDecode(s)
		}
		if idn && (!isASCII(s) || hasACELabel(s)) {
			if !utf8.ValidString(s) {
				return b, invalid(input, "host is not valid UTF-8")
			}
			a, err := idnaProfile.ToASCII(s)
			if err != nil {
				return b, invalid(input, "invalid internationalized host: "+err.Error())
			}
			s = a
		}
		if o.EncodeInvalidChars && !isASCII(s) {
			for i := 0; i < len(s); i++ {
				if c := s[i]; c >= 0x80 {
					b = append(b, '%', upperHex[c>>4], upperHex[c&15])
				} else {
					b = append(b, c)
				}
			}
		} else {
			b = append(b, s...)
		}
		if e.whatwg || o.LowercaseHost || idn {
			lowerASCII(b[start:])
		}
		if strict {
			for _, c := range b[start:] {
				if c < 0x80 && charClass[c]&cForbiddenDomain != 0 {
					return b, invalid(input, "forbidden character "+strconv.QuoteRune(rune(c))+" in host")
				}
			}
		}
	}

	// Dots.
	switch {
	case o.RemoveUnnecessaryHostDots:
		b = collapseDots(b, start)
	case o.RemoveHostTrailingDot:
		for len(b) > start && b[len(b)-1] == '.' {
			b = b[:len(b)-1]
		}
	}

	// IPv4 forms.
	isIP := false
	if e.whatwg {
		host := b[start:]
		if endsInNumber(host) {
			if n := len(host); n > 1 && host[n-1] == '.' {
				host = host[:n-1]
			}
			v, ok := parseIPv4(host)
			if !ok {
				return b, invalid(input, "invalid IPv4 address")
			}
			b = appendIPv4(b[:start], v)
			isIP = true
		}
	} else if o.CanonicalIPv4 || o.AddWWW {
		end := len(b)
		for end > start && b[end-1] == '.' {
			end--
		}
		if end > start && isDigit(b[end-1]) || hasHexTail(b[start:end]) {
			if v, ok := parseIPv4(b[start:end]); ok {
				isIP = true
				if o.CanonicalIPv4 {
					dots := len(b) - end
					b = appendIPv4(b[:start], v)
					for ; dots > 0; dots-- {
						b = append(b, '.')
					}
				}
			} else if strict && o.CanonicalIPv4 && endsInNumber(b[start:end]) {
				// Browsers refuse such a host ("999.1.1.1", "1.2.3.4.5")
				// and no DNS name ends in a numeric label.
				return b, invalid(input, "invalid IPv4 address")
			}
		}
	}

	// www.
	switch {
	case o.RemoveWWW:
		if host := b[start:]; len(host) > 4 && hasPrefixFold(host, "www.") {
			n := copy(host, host[4:])
			b = b[:start+n]
		}
	case o.AddWWW && !isIP:
		if host := b[start:]; !hasPrefixFold(host, "www.") {
			b = append(b, "www."...)
			copy(b[start+4:], b[start:len(b)-4])
			copy(b[start:], "www.")
		}
	}

	if len(b) == start && special {
		return b, invalid(input, "empty host")
	}
	// Dropping leading dots or "www." must not leave a host that would be
	// read back as an IP literal (".[" would give "http://[/").
	if len(b) > start && b[start] == '[' {
		return b, invalid(input, "host starts with '['")
	}
	return b, nil
}

// appendIPv6 validates a bracketed IPv6 host and writes it.
func (e *engine) appendIPv6(b []byte, h, input string) ([]byte, error) {
	if len(h) < 2 || h[len(h)-1] != ']' {
		return b, invalid(input, "unterminated IPv6 address")
	}
	inner := h[1 : len(h)-1]
	if strings.IndexByte(inner, '%') >= 0 {
		// RFC 6874 zone identifiers are not part of the URL Standard and
		// mean nothing off the local machine.
		return b, invalid(input, "zone identifier in IPv6 address")
	}
	a, err := netip.ParseAddr(inner)
	if err != nil || !a.Is6() {
		return b, invalid(input, "invalid IPv6 address")
	}
	b = append(b, '[')
	switch {
	case e.whatwg:
		b = appendIPv6Whatwg(b, a)
	case e.o.CanonicalIPv6:
		b = a.AppendTo(b)
	default:
		start := len(b)
		b = append(b, inner...)
		if e.o.LowercaseHost {
			lowerASCII(b[start:])
		}
	}
	return append(b, ']'), nil
}

// appendIPv6Whatwg writes a as the URL Standard serializes IPv6 addresses
// (§3.7): lower-case hex pieces without leading zeros, the first longest
// run of two or more zero pieces compressed, no dotted IPv4 tail.
func appendIPv6Whatwg(b []byte, a netip.Addr) []byte {
	raw := a.As16()
	var p [8]uint16
	for i := range p {
		p[i] = uint16(raw[2*i])<<8 | uint16(raw[2*i+1])
	}
	best, bestLen := -1, 1
	for i := 0; i < 8; {
		if p[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && p[j] == 0 {
			j++
		}
		if j-i > bestLen {
			best, bestLen = i, j-i
		}
		i = j
	}
	for i := 0; i < 8; i++ {
		if i == best {
			if i == 0 {
				b = append(b, ':')
			}
			b = append(b, ':')
			i += bestLen - 1
			continue
		}
		b = strconv.AppendUint(b, uint64(p[i]), 16)
		if i != 7 {
			b = append(b, ':')
		}
	}
	return b
}

// parseIPv4 parses h as an IPv4 address in the forms the URL Standard's
// IPv4 parser (§3.5) and inet_aton accept: one to four dot-separated
// numbers, each decimal, octal (leading 0) or hex (leading 0x); all but the
// last at most 255, the last filling the remaining octets. h must not end
// in a dot.
func parseIPv4(h []byte) (uint32, bool) {
	var parts [4]uint64
	n := 0
	for i := 0; ; {
		j := i
		for j < len(h) && h[j] != '.' {
			j++
		}
		if n == 4 {
			return 0, false
		}
		v, ok := parseIPv4Number(h[i:j])
		if !ok {
			return 0, false
		}
		parts[n] = v
		n++
		if j == len(h) {
			break
		}
		i = j + 1
	}
	for k := 0; k < n-1; k++ {
		if parts[k] > 255 {
			return 0, false
		}
	}
	if parts[n-1] >= 1<<(8*(5-n)) {
		return 0, false
	}
	v := parts[n-1]
	for k := 0; k < n-1; k++ {
		v += parts[k] << (8 * (3 - k))
	}
	return uint32(v), true
}

// parseIPv4Number parses one part of an IPv4 address (URL Standard §3.5,
// "IPv4 number parser"). Values above 2^32-1 fail: no valid address has
// such a part.
func parseIPv4Number(p []byte) (uint64, bool) {
	if len(p) == 0 {
		return 0, false
	}
	radix := uint64(10)
	switch {
	case len(p) >= 2 && p[0] == '0' && (p[1]|0x20) == 'x':
		p, radix = p[2:], 16
	case len(p) >= 2 && p[0] == '0':
		p, radix = p[1:], 8
	}
	var v uint64
	for _, c := range p {
		var d uint64
		switch {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case radix == 16 && isHex(c):
			d = uint64(unhex(c))
		default:
			return 0, false
		}
		if d >= radix {
			return 0, false
		}
		v = v*radix + d
		if v > 0xFFFFFFFF {
			return 0, false
		}
	}
	return v, true
}

// endsInNumber implements the URL Standard's "ends in a number checker":
// a host whose last label is a number must be an IPv4 address.
func endsInNumber(h []byte) bool {
	if n := len(h); n > 0 && h[n-1] == '.' {
		h = h[:n-1]
		if len(h) == 0 {
			return false
		}
	}
	last := h
	if i := lastIndexByte(h, '.'); i >= 0 {
		last = h[i+1:]
	}
	if len(last) == 0 {
		return false
	}
	allDigits := true
	for _, c := range last {
		if !isDigit(c) {
			allDigits = false
			break
		}
	}
	if allDigits {
		return true
	}
	// Otherwise a syntactically valid IPv4 number ("0x1F"); its size does
	// not matter here.
	if len(last) < 2 || last[0] != '0' || last[1]|0x20 != 'x' {
		return false
	}
	for _, c := range last[2:] {
		if !isHex(c) {
			return false
		}
	}
	return true
}

// hasHexTail reports whether the last label of h starts with "0x", the
// only IPv4 number form that does not end in a digit.
func hasHexTail(h []byte) bool {
	last := h
	if i := lastIndexByte(h, '.'); i >= 0 {
		last = h[i+1:]
	}
	return len(last) >= 2 && last[0] == '0' && (last[1]|0x20) == 'x'
}

func appendIPv4(b []byte, v uint32) []byte {
	b = strconv.AppendUint(b, uint64(v>>24), 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, uint64(v>>16&0xff), 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, uint64(v>>8&0xff), 10)
	b = append(b, '.')
	return strconv.AppendUint(b, uint64(v&0xff), 10)
}

// collapseDots removes leading and trailing dots of b[start:] and collapses
// runs of dots, in place.
func collapseDots(b []byte, start int) []byte {
	w := start
	for r := start; r < len(b); r++ {
		c := b[r]
		if c == '.' && (w == start || b[w-1] == '.') {
			continue
		}
		b[w] = c
		w++
	}
	if w > start && b[w-1] == '.' {
		w--
	}
	return b[:w]
}

// hasACELabel reports whether some label of h starts with the IDNA ACE
// prefix "xn--" (ASCII case-insensitive).
func hasACELabel(h string) bool {
	for i := 0; i+4 <= len(h); i++ {
		if (i == 0 || h[i-1] == '.') && h[i]|0x20 == 'x' && h[i+1]|0x20 == 'n' && h[i+2] == '-' && h[i+3] == '-' {
			return true
		}
	}
	return false
}

// percentDecode decodes every valid percent-escape of s; a '%' that does
// not start one is kept.
func percentDecode(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, c)
	}
	return string(b)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func lowerASCII(b []byte) {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
}

func lastIndexByte(b []byte, c byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == c {
			return i
		}
	}
	return -1
}

func hasPrefixFold(b []byte, prefix string) bool {
	if len(b) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if b[i]|0x20 != prefix[i]|0x20 {
			return false
		}
	}
	return true
}
