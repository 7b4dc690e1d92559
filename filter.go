package crawlkit

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"golang.org/x/time/rate"
)

// URL filters: allow and deny patterns over the normalized URL, on top of
// the Scope, for the crawls that are about part of a site ("only /docs/",
// "never /cart"). Config.AllowURLs and DenyURLs take regular expressions;
// Glob makes one from a shell-style pattern.

// urlFilter applies Config.AllowURLs and DenyURLs.
type urlFilter struct {
	allow, deny []*regexp.Regexp
	once        sync.Map // deny pattern -> struct{}: logged at Info
}

func newURLFilter(c Config) *urlFilter {
	if len(c.AllowURLs) == 0 && len(c.DenyURLs) == 0 {
		return nil
	}
	return &urlFilter{allow: c.AllowURLs, deny: c.DenyURLs}
}

// refuses returns why the filters refuse u ("" if they let it through):
// a matching deny pattern, or no matching allow pattern.
func (f *urlFilter) refuses(u string) string {
	if f == nil {
		return ""
	}
	for _, re := range f.deny {
		if re.MatchString(u) {
			return "denied by " + re.String()
		}
	}
	if len(f.allow) == 0 {
		return ""
	}
	for _, re := range f.allow {
		if re.MatchString(u) {
			return ""
		}
	}
	return "matches no allow pattern"
}

// firstRefusal reports whether this is the first refusal for why, so
// that a rule stopping a pattern is logged once.
func (f *urlFilter) firstRefusal(why string) bool {
	_, seen := f.once.LoadOrStore(why, struct{}{})
	return !seen
}

// Glob compiles a shell-style URL pattern into a regular expression for
// Config.AllowURLs and DenyURLs: "*" matches any run of characters other
// than "/", "**" any run at all, "?" one character other than "/"; the
// rest is literal, and the pattern must match the whole URL, as
// normalized (scheme and host lower case, default port dropped). For
// example "https://example.com/docs/**" or "https://*.example.com/*.pdf".
func Glob(pattern string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '*':
			if i+1 < len(pattern) && pattern[i+1] == '*' {
				b.WriteString(".*")
				i++
			} else {
				b.WriteString("[^/]*")
			}
		case '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("%w: glob %q: %v", ErrConfig, pattern, err)
	}
	return re, nil
}

// MustGlob is Glob for patterns written in the program: it panics on an
// error.
func MustGlob(pattern string) *regexp.Regexp {
	re, err := Glob(pattern)
	if err != nil {
		panic(err)
	}
	return re
}

// newRate returns the limiter of Config.MaxRequestsPerSecond, or nil. Its
// burst is one request: the cap holds over any second, not on average.
func newRate(perSecond float64) *rate.Limiter {
	if perSecond <= 0 {
		return nil
	}
	return rate.NewLimiter(rate.Limit(perSecond), 1)
}
