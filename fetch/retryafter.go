package fetch

import (
	"net/http"
	"strings"
	"time"
)

// maxRetryAfterSeconds bounds the delta-seconds form before conversion, so
// that a hostile value cannot overflow time.Duration. Callers cap far lower.
const maxRetryAfterSeconds = 1 << 31

// ParseRetryAfter parses a Retry-After header value (RFC 9110 §10.2.3),
// either delay-seconds ("120") or an HTTP-date ("Fri, 31 Dec 1999 23:59:59
// GMT", or the obsolete RFC 850 and asctime forms that §5.6.7 requires
// recipients to accept), and returns the delay from now. A date in the past
// gives 0. ok is false for anything else, including negative or fractional
// seconds, which the grammar does not allow.
func ParseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.Trim(v, " \t")
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		var n int64
		for i := 0; i < len(v); i++ {
			n = n*10 + int64(v[i]-'0')
			if n > maxRetryAfterSeconds {
				n = maxRetryAfterSeconds
				break
			}
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	if !t.After(now) {
		return 0, true
	}
	return t.Sub(now), true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
