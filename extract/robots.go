package extract

import (
	"strings"
)

// robotsAcc merges robots directives from meta tags and headers.
type robotsAcc struct {
	agent string // lower-case product token, or ""
	r     Robots
}

func (a *robotsAcc) result() Robots { return a.r }

// apply records one directive token (already trimmed).
func (a *robotsAcc) apply(tok string) {
	switch strings.ToLower(tok) {
	case "noindex":
		a.r.Noindex = true
	case "nofollow":
		a.r.Nofollow = true
	case "none":
		a.r.Noindex, a.r.Nofollow = true, true
	case "noarchive", "nocache":
		a.r.Noarchive = true
	case "nosnippet":
		a.r.Nosnippet = true
	case "noimageindex":
		a.r.NoImageIndex = true
	}
}

// meta reads a <meta name="robots"> or <meta name="AGENT"> content value:
// directives separated by commas (and, leniently, spaces).
func (a *robotsAcc) meta(content []byte) {
	for _, tok := range strings.FieldsFunc(string(content), func(r rune) bool {
		return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f'
	}) {
		a.apply(tok)
	}
}

// valuedDirectives take a value after a colon; any other "word:" prefix in
// an X-Robots-Tag names the user agent the following directives are for.
var valuedDirectives = map[string]bool{
	"unavailable_after": true, "max-snippet": true, "max-image-preview": true, "max-video-preview": true,
}

// header reads one X-Robots-Tag header value. Its directives apply to every
// crawler unless preceded by "AGENT:", which scopes the directives after it
// (up to the next agent prefix) to that crawler, as Google documents:
// "X-Robots-Tag: googlebot: nofollow", "X-Robots-Tag: otherbot: noindex, nofollow".
func (a *robotsAcc) header(v string) {
	applies := true
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if name, rest, ok := strings.Cut(part, ":"); ok {
			n := strings.ToLower(strings.TrimSpace(name))
			if !valuedDirectives[n] && n != "" && !strings.ContainsAny(n, " \t") {
				applies = n == a.agent && a.agent != ""
				part = strings.TrimSpace(rest)
			}
		}
		if !applies {
			continue
		}
		for _, tok := range strings.Fields(part) {
			a.apply(tok)
		}
	}
}
