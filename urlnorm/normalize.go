package urlnorm

import "strings"

// Normalize returns the normalized form of rawURL under the options o.
//
// rawURL must be an absolute URL (or, with AddDefaultScheme, a scheme-less
// "host/path"). An error wraps ErrInvalid (malformed URL), ErrTooLong
// (which also matches ErrInvalid) or ErrUnsupportedScheme, and says what was
// wrong.
//
// For the predefined profiles the result is a fixed point:
// o.Normalize(o.Normalize(x)) returns the same string.
func (o *Config) Normalize(rawURL string) (string, error) {
	var e engine
	e.init(o)
	var buf [512]byte
	b, err := e.normalize(buf[:0], rawURL)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// safeBrowsingEscape prepares a URL for Safe Browsing canonicalization
// ("URLs and Hashing"): it splits off the fragment, trims the URL and
// strips tabs, CR and LF, percent-decodes repeatedly until no escape is
// left, and re-escapes the octets <= 0x20, >= 0x7F, '#' and '%'. Splitting
// the fragment first keeps a decoded "%23" from starting one.
func safeBrowsingEscape(s string) (rest, frag string, hasFrag bool) {
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s, frag, hasFrag = s[:i], s[i+1:], true
	}
	rest = safeBrowsingRecode(cleanInput(s))
	if hasFrag {
		frag = safeBrowsingRecode(cleanInput(frag))
	}
	return rest, frag, hasFrag
}

// safeBrowsingRecode unescapes s until no percent-escape is left, then
// escapes the Safe Browsing set. Unescaping runs in one pass: after each
// byte is appended, an escape that has just formed at the end of the
// output is decoded at once, which reaches the same fixed point as
// decoding the whole string again and again, in linear time.
func safeBrowsingRecode(s string) string {
	if strings.IndexByte(s, '%') < 0 && !needsSafeBrowsingEscape(s) {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		b = append(b, s[i])
		for n := len(b); n >= 3 && b[n-3] == '%' && isHex(b[n-2]) && isHex(b[n-1]); n = len(b) {
			v := unhex(b[n-2])<<4 | unhex(b[n-1])
			b = append(b[:n-3], v)
		}
	}
	out := make([]byte, 0, len(b)+len(b)/2)
	for _, c := range b {
		if c <= 0x20 || c >= 0x7f || c == '#' || c == '%' {
			out = append(out, '%', upperHex[c>>4], upperHex[c&15])
		} else {
			out = append(out, c)
		}
	}
	return string(out)
}

func needsSafeBrowsingEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= 0x20 || c >= 0x7f || c == '#' {
			return true
		}
	}
	return false
}
