package usage

import (
	"strings"
	"time"
)

// Directives are the robots directives that bear on use, addressed to a
// crawler by the Robots-Tag or X-Robots-Tag header or a robots <meta>
// element. They are restrictive only: the absence of one is no
// instruction (draft-illyes-repext §3.1.1).
type Directives struct {
	// Noindex: not to be stored in a publicly accessible index
	// (draft-illyes-repext §3.1.3); "none" implies it.
	Noindex bool
	// NoAI and NoImageAI: the page's content, or its images, are not to
	// be used for AI (the noai and noimageai values DeviantArt introduced
	// and others adopted).
	NoAI, NoImageAI bool
	// UnavailableAfter is Google's unavailable_after date: past it the
	// page is not to be shown in search results. Zero when absent.
	UnavailableAfter time.Time
}

// Statement turns the directives into a statement of preference at now:
// noindex, or an unavailable_after date before now, disallows Search;
// noai disallows AITraining and AIInput.
func (d Directives) Statement(now time.Time) Statement {
	var st Statement
	if d.Noindex || !d.UnavailableAfter.IsZero() && now.After(d.UnavailableAfter) {
		st.Set(Search, Disallowed)
	}
	if d.NoAI {
		st.Set(AITraining, Disallowed)
		st.Set(AIInput, Disallowed)
	}
	return st
}

// apply records one directive, read case-insensitively
// (draft-illyes-repext §3.1.3).
func (d *Directives) apply(tok string) {
	switch strings.ToLower(tok) {
	case "noindex", "none":
		d.Noindex = true
	case "noai":
		d.NoAI = true
	case "noimageai":
		d.NoImageAI = true
	}
}

// ParseRobotsTag reads a Robots-Tag field value (draft-illyes-repext
// §3.1.1): an RFC 9651 List whose members are product tokens, or "*" for
// every crawler, each with its rules as Boolean parameters ("*;nosnippet,
// ExampleBot;noindex"). The rules of "*" and of token (compared
// case-insensitively) are united. A field that does not parse gives no
// directives.
func ParseRobotsTag(field, token string) Directives {
	var d Directives
	members, ok := parseList(field)
	if !ok {
		return d
	}
	for _, m := range members {
		if m.token != "*" && (token == "" || !strings.EqualFold(m.token, token)) {
			continue
		}
		for _, p := range m.params {
			if p.ok && p.token == "" {
				d.apply(p.key)
			}
		}
	}
	return d
}

// ParseXRobotsTag reads the lines of an X-Robots-Tag header in the forms
// Google documents: comma-separated directives that apply to every
// crawler, unless "AGENT:" precedes them, which scopes the directives after
// it on that line to the crawler with that product token
// ("X-Robots-Tag: googlebot: noindex, nofollow"); "unavailable_after: DATE"
// takes a date in the RFC 822, RFC 850 or ISO 8601 formats. A line in the
// Robots-Tag List form ("*;noai") is read as one.
func ParseXRobotsTag(lines []string, token string) Directives {
	var d Directives
	total := 0
	for _, line := range lines {
		if total += len(line); total > maxField {
			break
		}
		if strings.IndexByte(line, ';') >= 0 {
			if _, ok := parseList(line); ok {
				r := ParseRobotsTag(line, token)
				d.merge(r)
				continue
			}
		}
		d.legacyLine(line, token)
	}
	return d
}

func (d *Directives) merge(o Directives) {
	d.Noindex = d.Noindex || o.Noindex
	d.NoAI = d.NoAI || o.NoAI
	d.NoImageAI = d.NoImageAI || o.NoImageAI
	if !o.UnavailableAfter.IsZero() && (d.UnavailableAfter.IsZero() || o.UnavailableAfter.Before(d.UnavailableAfter)) {
		d.UnavailableAfter = o.UnavailableAfter
	}
}

// valuedDirectives take a value after a colon; any other "word:" prefix
// names the crawler the directives after it are for.
var valuedDirectives = map[string]bool{
	"unavailable_after": true, "max-snippet": true, "max-image-preview": true, "max-video-preview": true,
}

// legacyLine reads one X-Robots-Tag line in Google's form.
func (d *Directives) legacyLine(line, token string) {
	applies := true
	parts := strings.Split(line, ",")
	for i := 0; i < len(parts); i++ {
		part := strings.TrimSpace(parts[i])
		if name, rest, ok := strings.Cut(part, ":"); ok {
			n := strings.ToLower(strings.TrimSpace(name))
			if !valuedDirectives[n] && n != "" && !strings.ContainsAny(n, " \t") {
				applies = token != "" && strings.EqualFold(n, token)
				part = strings.TrimSpace(rest)
			}
		}
		if !applies {
			continue
		}
		i += d.directives(part, parts[i+1:])
	}
}

// directives applies the directives of one comma-separated part; more are
// the parts after it, which an unavailable_after date may extend into
// ("unavailable_after: Friday, 25-Jun-10 15:00:00 GMT"). It returns how
// many of them the date took.
func (d *Directives) directives(part string, more []string) int {
	if name, rest, ok := strings.Cut(part, ":"); ok && strings.EqualFold(strings.TrimSpace(name), "unavailable_after") {
		date := strings.TrimSpace(rest)
		for n := 0; n <= len(more) && n <= 2; n++ {
			if n > 0 {
				date += "," + more[n-1]
			}
			if t, ok := parseDate(date); ok {
				d.merge(Directives{UnavailableAfter: t})
				return n
			}
		}
		return 0
	}
	for _, tok := range strings.Fields(part) {
		d.apply(tok)
	}
	return 0
}

// dateLayouts are the formats Google reads unavailable_after in.
var dateLayouts = []string{
	time.RFC1123, time.RFC1123Z, time.RFC850, time.RFC822, time.RFC822Z, time.RFC3339, time.ANSIC,
	"2 Jan 2006 15:04:05 MST", "2 Jan 2006 15:04:05 -0700", "2-Jan-2006 15:04:05 MST",
	"Monday, 2-Jan-2006 15:04:05 MST", "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02",
}

func parseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 64 {
		return time.Time{}, false
	}
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// ParseMetaRobots reads the content of a <meta name="robots"> (or
// name="TOKEN") element: directives separated by commas or white space,
// and "unavailable_after: DATE".
func ParseMetaRobots(content string) Directives {
	var d Directives
	if len(content) > maxField {
		content = content[:maxField]
	}
	parts := strings.Split(content, ",")
	for i := 0; i < len(parts); i++ {
		i += d.directives(strings.TrimSpace(parts[i]), parts[i+1:])
	}
	return d
}
