package sitemap

import (
	"strings"
	"time"
)

// parseW3CDate parses the W3C Datetime profile of ISO 8601 that sitemaps.org
// prescribes for <lastmod> (https://www.w3.org/TR/NOTE-datetime): YYYY,
// YYYY-MM, YYYY-MM-DD, and YYYY-MM-DDThh:mm[:ss[.s+]]TZD with TZD "Z" or
// "+hh:mm". Atom's RFC 3339 timestamps are a subset. A time without a zone
// designator is ambiguous and rejected, as the profile requires one; "+hhmm"
// without the colon is accepted because it is a common and unambiguous slip.
// The result is in UTC; ok is false for anything else, including
// out-of-range fields such as hour 25.
func parseW3CDate(s string) (time.Time, bool) {
	var layouts []string
	switch {
	case len(s) == 4:
		layouts = []string{"2006"}
	case len(s) == 7:
		layouts = []string{"2006-01"}
	case len(s) == 10:
		layouts = []string{"2006-01-02"}
	case len(s) > 10 && (s[10] == 'T' || s[10] == 't'):
		// time.Parse accepts a fractional second after the seconds field
		// even when the layout has none.
		layouts = []string{
			"2006-01-02T15:04:05Z07:00",
			"2006-01-02T15:04Z07:00",
			"2006-01-02T15:04:05Z0700",
			"2006-01-02T15:04Z0700",
		}
		s = strings.ToUpper(s)
	default:
		return time.Time{}, false
	}
	for _, l := range layouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// rfc822Zones are the zone names of RFC 822 §5.1 (and RFC 5322 §4.3) in
// minutes east of UTC. Military single-letter zones are left out: RFC 1123
// §5.2.14 notes their signs were specified backwards and they are unusable.
var rfc822Zones = map[string]int{
	"UT": 0, "UTC": 0, "GMT": 0, "Z": 0,
	"EST": -5 * 60, "EDT": -4 * 60,
	"CST": -6 * 60, "CDT": -5 * 60,
	"MST": -7 * 60, "MDT": -6 * 60,
	"PST": -8 * 60, "PDT": -7 * 60,
}

var months = map[string]time.Month{
	"jan": time.January, "feb": time.February, "mar": time.March, "apr": time.April,
	"may": time.May, "jun": time.June, "jul": time.July, "aug": time.August,
	"sep": time.September, "oct": time.October, "nov": time.November, "dec": time.December,
}

// parseRFC822Date parses an RSS <pubDate>, which RSS 2.0 defines as an RFC
// 822 date-time: [Www, ] DD Mon YY[YY] hh:mm[:ss] zone. Two-digit years
// follow RFC 5322 §4.3 (00-49 are 20xx, 50-99 are 19xx). A date without a
// zone is rejected because its instant is unknown. Feeds that put an RFC 3339
// timestamp in pubDate are accepted too.
func parseRFC822Date(s string) (time.Time, bool) {
	if t, ok := parseW3CDate(s); ok && len(s) > 10 {
		return t, true
	}
	if i := strings.IndexByte(s, ','); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s)
	if len(f) != 5 {
		return time.Time{}, false
	}
	day, ok := atoi(f[0], 1, 2)
	if !ok {
		return time.Time{}, false
	}
	mon, ok := months[strings.ToLower(f[1])]
	if !ok {
		return time.Time{}, false
	}
	year, ok := atoi(f[2], 2, 4)
	if !ok || len(f[2]) == 3 {
		return time.Time{}, false
	}
	if len(f[2]) == 2 {
		if year < 50 {
			year += 2000
		} else {
			year += 1900
		}
	}
	hms := strings.Split(f[3], ":")
	if len(hms) != 2 && len(hms) != 3 {
		return time.Time{}, false
	}
	var clock [3]int
	for i, p := range hms {
		if clock[i], ok = atoi(p, 2, 2); !ok {
			return time.Time{}, false
		}
	}
	// A leap second (60) is legal in RFC 5322 but not representable; it is
	// read as the last second of the minute.
	if clock[0] > 23 || clock[1] > 59 || clock[2] > 60 {
		return time.Time{}, false
	}
	if clock[2] == 60 {
		clock[2] = 59
	}
	offset, ok := rfc822Zone(f[4])
	if !ok {
		return time.Time{}, false
	}
	t := time.Date(year, mon, day, clock[0], clock[1], clock[2], 0, time.FixedZone("", offset*60))
	if t.Day() != day { // 31 Feb and the like roll over
		return time.Time{}, false
	}
	return t.UTC(), true
}

func rfc822Zone(z string) (minutes int, ok bool) {
	if m, ok := rfc822Zones[strings.ToUpper(z)]; ok {
		return m, true
	}
	if len(z) != 5 || (z[0] != '+' && z[0] != '-') {
		return 0, false
	}
	h, ok1 := atoi(z[1:3], 2, 2)
	m, ok2 := atoi(z[3:5], 2, 2)
	if !ok1 || !ok2 || h > 23 || m > 59 {
		return 0, false
	}
	minutes = h*60 + m
	if z[0] == '-' {
		minutes = -minutes
	}
	return minutes, true
}

// atoi parses an unsigned decimal of minDigits..maxDigits digits.
func atoi(s string, minDigits, maxDigits int) (int, bool) {
	if len(s) < minDigits || len(s) > maxDigits {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
