package urlnorm

// Character classes, one bit each, looked up in a 256-entry table so the
// hot loops do one load per byte.
const (
	// cUnreserved: ALPHA / DIGIT / "-" / "." / "_" / "~" (RFC 3986 §2.3).
	cUnreserved uint16 = 1 << iota
	// cInvalid: octets that may not appear in a URI component and that
	// EncodeInvalidChars escapes: controls, space, DEL, non-ASCII and
	// "<>[\]^`{|} (RFC 3986 §2; crawler-commons' BasicURLNormalizer set).
	cInvalid
	// cWPath, cWQuery, cWFragment, cWUserinfo: the URL Standard's
	// percent-encode sets for an http(s) URL's path, query ("special-query
	// percent-encode set"), fragment and userinfo.
	cWPath
	cWQuery
	cWFragment
	cWUserinfo
	// cForbiddenDomain: the URL Standard's forbidden domain code points
	// (ASCII only).
	cForbiddenDomain
	// cScheme: characters allowed after the first one of a scheme.
	cScheme
	// cHex: hexadecimal digits.
	cHex
	// cUpper: ASCII upper-case letters.
	cUpper
	// cTabNL: tab, LF and CR, which the URL Standard removes anywhere.
	cTabNL
	// cPlainHost: lower-case ASCII letters, digits, '-', '.' and '_'; a
	// host made only of these needs no host processing except dot and IP
	// rules.
	cPlainHost
	// cPercent: '%'.
	cPercent
	// cAt: '@', escaped inside a userinfo.
	cAt
	// cHash: '#', escaped inside a fragment.
	cHash
	// cApos: '\'', escaped in a query with EncodeQueryApostrophe.
	cApos
)

var charClass = func() (t [256]uint16) {
	set := func(bit uint16, chars string) {
		for i := 0; i < len(chars); i++ {
			t[chars[i]] |= bit
		}
	}
	for c := 0; c < 256; c++ {
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			t[c] |= cUnreserved | cScheme | cPlainHost
		case 'A' <= c && c <= 'Z':
			t[c] |= cUnreserved | cScheme | cUpper
		}
		if c <= 0x20 || c >= 0x7f {
			t[c] |= cInvalid
		}
		// The C0 control percent-encode set (C0 controls, DEL and
		// non-ASCII) is part of every URL Standard set.
		if c < 0x20 || c >= 0x7f {
			t[c] |= cWPath | cWQuery | cWFragment | cWUserinfo
		}
		if c <= 0x20 || c == 0x7f {
			t[c] |= cForbiddenDomain
		}
	}
	set(cUnreserved|cPlainHost, "-._")
	set(cUnreserved, "~")
	set(cScheme, "+-.")
	set(cHex, "0123456789abcdefABCDEF")
	set(cInvalid, "\"<>[\\]^`{|}")
	// URL Standard §1.3 percent-encode sets. '^' joined the path set in
	// 2025 (whatwg/url#846), as Chrome and Firefox already encoded it.
	set(cWFragment, " \"<>`")
	set(cWQuery, " \"#<>'")
	set(cWPath, " \"#<>?^`{}")
	set(cWUserinfo, " \"#<>?`{}/:;=@[\\]^|")
	set(cForbiddenDomain, "#/:<>?@[\\]^|%")
	set(cTabNL, "\t\n\r")
	set(cPercent, "%")
	set(cApos, "'")
	set(cAt, "@")
	set(cHash, "#")
	return t
}()

const upperHex = "0123456789ABCDEF"

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	default:
		return c - '0'
	}
}

func isHex(c byte) bool { return charClass[c]&cHex != 0 }

// isLeadTrim reports whether c is trimmed from both ends of an input: a C0
// control or space (URL Standard, basic URL parser step 1).
func isLeadTrim(c byte) bool { return c <= 0x20 }
