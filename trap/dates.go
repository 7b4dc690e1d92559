package trap

import (
	"strings"
	"time"
)

// A date found in a URL. Month and day are zero when the URL names only a
// year (or a month).
type date struct{ y, m, d int }

func (t date) String() string {
	b := make([]byte, 0, 10)
	b = appendPadded(b, t.y, 4)
	if t.m > 0 {
		b = append(b, '-')
		b = appendPadded(b, t.m, 2)
		if t.d > 0 {
			b = append(b, '-')
			b = appendPadded(b, t.d, 2)
		}
	}
	return string(b)
}

func appendPadded(b []byte, n, width int) []byte {
	s := itoa(n)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// dateScan is what scanDates found: up to four dates, whether each is a
// calendar page (the path ends in it, or it is in the query) rather than the
// date of an article, and which path segments and query parameters (by
// index, the first 64) hold date parts.
type dateScan struct {
	dates [4]date
	page  [4]bool
	n     int
	segs  uint64
	parms uint64
}

func (s *dateScan) add(t date, page bool) {
	if s.n < len(s.dates) {
		s.dates[s.n], s.page[s.n] = t, page
		s.n++
	}
}

func bit(i int) uint64 {
	if i < 0 || i >= 64 {
		return 0
	}
	return 1 << uint(i)
}

// scanDates finds the dates of u in the forms calendars use: /2031/01/,
// /2031/01/15/, /calendar/2031/, /2031-01-15/, /2031-01-15.html,
// ?date=2031-01-15, ?d=20310115 and ?year=2031&month=1(&day=15).
func scanDates(u *parsedURL, s *dateScan) {
	segs := u.segs
	n := len(segs)
	for i := 0; i < n; i++ {
		seg := segs[i]
		if y, ok := yearOf(seg); ok {
			if i+1 < n {
				if m, ok := smallNum(segs[i+1], 12); ok {
					t, k := date{y, m, 0}, 2
					if i+2 < n {
						if d, ok := smallNum(segs[i+2], 31); ok {
							t.d, k = d, 3
						}
					}
					for j := i; j < i+k; j++ {
						s.segs |= bit(j)
					}
					s.add(t, i+k == n)
					i += k - 1
					continue
				}
			}
			if i > 0 && calendarWord(segs[i-1]) {
				s.segs |= bit(i)
				s.add(date{y, 0, 0}, i+1 == n)
			}
			continue
		}
		if y, m, d, rest, ok := compactDateRest(seg); ok {
			s.segs |= bit(i)
			// 2031-01-15-some-title is an article; 2031-01-15.html a page.
			s.add(date{y, m, d}, i+1 == n && (rest == "" || rest[0] == '.'))
			continue
		}
		if i > 0 && calendarWord(segs[i-1]) {
			if t, ok := eightDigitDate(seg); ok {
				s.segs |= bit(i)
				s.add(t, i+1 == n)
			}
		}
	}

	yi, mi, di := -1, -1, -1
	var y, m, d int
	it := params{rest: u.query, sep: '&'}
	for k := 0; it.next(); k++ {
		name, value := it.name, it.value
		if ty, tm, td, _, ok := compactDateRest(value); ok {
			s.parms |= bit(k)
			s.add(date{ty, tm, td}, true)
			continue
		}
		switch {
		case yi < 0 && nameIn(name, yearNames):
			if v, ok := yearOf(value); ok {
				yi, y = k, v
				continue
			}
		case mi < 0 && nameIn(name, monthNames):
			if v, ok := smallNum(value, 12); ok {
				mi, m = k, v
				continue
			}
		case di < 0 && nameIn(name, dayNames):
			if v, ok := smallNum(value, 31); ok {
				di, d = k, v
				continue
			}
		}
		if nameIn(name, dateNames) {
			if t, ok := eightDigitDate(value); ok {
				s.parms |= bit(k)
				s.add(t, true)
			}
		}
	}
	if yi >= 0 {
		t := date{y, 0, 0}
		s.parms |= bit(yi)
		if mi >= 0 {
			t.m = m
			s.parms |= bit(mi)
			if di >= 0 {
				t.d = d
				s.parms |= bit(di)
			}
		}
		s.add(t, true)
	}
}

var (
	yearNames  = []string{"year", "yr", "y", "jahr", "annee", "anno", "ano"}
	monthNames = []string{"month", "mon", "m", "monat", "mois", "mes"}
	dayNames   = []string{"day", "d", "tag", "jour", "dia"}
	dateNames  = []string{"date", "day", "d", "dt", "from", "to", "start", "end", "since", "until", "when", "datum", "fecha"}
	// calendarWords precede a bare year in a calendar path (/events/2031/).
	calendarWords = []string{"calendar", "cal", "kalender", "agenda", "events", "event", "archive", "archives",
		"schedule", "diary", "date", "dates", "day", "days", "week", "month", "year", "years", "termine"}
)

func nameIn(name string, list []string) bool {
	for _, s := range list {
		if equalFold(name, s) {
			return true
		}
	}
	return false
}

func calendarWord(seg string) bool { return nameIn(seg, calendarWords) }

// yearOf parses a four-digit year from 1000 to 2999: wide enough for any
// calendar a trap walks to, narrow enough that most four-digit ids are not
// taken for years.
func yearOf(s string) (int, bool) {
	if len(s) != 4 || s[0] < '1' || s[0] > '2' {
		return 0, false
	}
	return digits(s)
}

// smallNum parses a one- or two-digit number from 1 to max.
func smallNum(s string, max int) (int, bool) {
	if len(s) == 0 || len(s) > 2 {
		return 0, false
	}
	v, ok := digits(s)
	return v, ok && v >= 1 && v <= max
}

func digits(s string) (int, bool) {
	v := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, len(s) > 0
}

// compactDate parses an ISO 8601-like date at the start of v: YYYY-MM or
// YYYY-MM-DD, with '-' or '_' as separator.
func compactDate(v string) (y, m, d int, ok bool) {
	y, m, d, _, ok = compactDateRest(v)
	return
}

// compactDateRest is compactDate that also returns what follows the date.
// The date must end the string or be followed by a non-digit.
func compactDateRest(v string) (y, m, d int, rest string, ok bool) {
	if len(v) < 7 {
		return
	}
	if y, ok = yearOf(v[:4]); !ok {
		return
	}
	sep := v[4]
	if sep != '-' && sep != '_' {
		return 0, 0, 0, "", false
	}
	m, rest, ok = numPrefix(v[5:], 12)
	if !ok {
		return 0, 0, 0, "", false
	}
	if len(rest) >= 2 && rest[0] == sep && isDigit(rest[1]) {
		d, rest, ok = numPrefix(rest[1:], 31)
		if !ok {
			return 0, 0, 0, "", false
		}
	}
	if rest != "" && isDigit(rest[0]) {
		return 0, 0, 0, "", false
	}
	return y, m, d, rest, true
}

// numPrefix parses one or two digits (1..max) at the start of s.
func numPrefix(s string, max int) (int, string, bool) {
	n := 0
	for n < len(s) && n < 3 && isDigit(s[n]) {
		n++
	}
	if n == 0 || n > 2 {
		return 0, s, false
	}
	v, _ := digits(s[:n])
	return v, s[n:], v >= 1 && v <= max
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// eightDigitDate parses YYYYMMDD for years 1900 to 2199; it is only tried
// where the context says a date is expected, since such numbers are also
// common ids.
func eightDigitDate(s string) (date, bool) {
	if len(s) != 8 {
		return date{}, false
	}
	v, ok := digits(s)
	if !ok {
		return date{}, false
	}
	t := date{v / 10000, v / 100 % 100, v % 100}
	if t.y < 1900 || t.y > 2199 || t.m < 1 || t.m > 12 || t.d < 1 || t.d > 31 {
		return date{}, false
	}
	return t, true
}

// dateRange implements the first half of the calendar rule: a date too far
// from now. Calendars generate links to the next and previous period without
// end; real sites rarely link far into the future, and the past is only
// suspicious for calendar pages, not dated articles (archives are real).
func (d *Detector) dateRange(s *dateScan, now time.Time) Verdict {
	ny, nm := now.Year(), int(now.Month())
	nowMonths := ny*12 + nm - 1
	for i := 0; i < s.n; i++ {
		t := s.dates[i]
		months := t.y*12 + t.m - 1
		if a := d.cfg.yearsAhead; a >= 0 {
			if (t.m == 0 && t.y > ny+a) || (t.m > 0 && months > nowMonths+12*a) {
				return reject(RuleCalendar, "date "+t.String()+" is more than "+itoa(a)+" years after "+date{ny, nm, 0}.String())
			}
		}
		if b := d.cfg.yearsBehind; b >= 0 && s.page[i] {
			if (t.m == 0 && t.y < ny-b) || (t.m > 0 && months < nowMonths-12*b) {
				return reject(RuleCalendar, "date "+t.String()+" is more than "+itoa(b)+" years before "+date{ny, nm, 0}.String())
			}
		}
	}
	return Verdict{}
}

// shapeHash hashes u with its dates replaced by a placeholder: two URLs of
// one calendar differ only in their dates and so share a shape.
func shapeHash(u *parsedURL, s *dateScan) uint64 {
	h := hashString(offset64, u.host)
	prevDate := false
	for i, seg := range u.segs {
		if s.segs&bit(i) != 0 {
			if !prevDate {
				h = hashString(h, "/{date}")
			}
			prevDate = true
			continue
		}
		prevDate = false
		h = hashByte(h, '/')
		h = hashString(h, seg)
	}
	var q uint64
	it := params{rest: u.query, sep: '&'}
	for k := 0; it.next(); k++ {
		ph := hashString(offset64, it.name)
		if s.parms&bit(k) != 0 {
			ph = hashString(hashByte(ph, '='), "{date}")
		} else {
			ph = hashString(hashByte(ph, '='), it.value)
		}
		q += mix(ph) // order-independent: parameter order does not matter
	}
	return mix(h ^ q)
}

// shapeString writes the shape of u for a reason: /events/{date}/?view=month.
func shapeString(u *parsedURL, s *dateScan) string {
	var b strings.Builder
	prevDate := false
	for i, seg := range u.segs {
		if s.segs&bit(i) != 0 {
			if !prevDate {
				b.WriteString("/{date}")
			}
			prevDate = true
			continue
		}
		prevDate = false
		b.WriteByte('/')
		b.WriteString(seg)
	}
	if strings.HasSuffix(u.path, "/") || b.Len() == 0 {
		b.WriteByte('/')
	}
	it := params{rest: u.query, sep: '&'}
	for k := 0; it.next(); k++ {
		if k == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(it.name)
		b.WriteByte('=')
		if s.parms&bit(k) != 0 {
			b.WriteString("{date}")
		} else {
			b.WriteString(it.value)
		}
	}
	return b.String()
}

// dateKey hashes the dates found, to count distinct dates of a shape.
func dateKey(s *dateScan) uint64 {
	h := offset64
	for i := 0; i < s.n; i++ {
		t := s.dates[i]
		h = hashUint(h, uint64(t.y*10000+t.m*100+t.d))
	}
	return mix(h)
}
