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
// date of an article, which are bare and which of those far (see
// scanDates), and which path segments and query parameters (by index, the
// first 64) hold date parts.
type dateScan struct {
	dates [4]date
	page  [4]bool
	n     int
	bare  uint8 // one bit per index of dates
	far   uint8 // likewise; a subset of bare
	segs  uint64
	parms uint64
}

// add adds t, a bare date when bare, and far when it is bare and outside
// sp.
func (s *dateScan) add(t date, page, bare bool, sp span) {
	if s.n < len(s.dates) {
		s.dates[s.n], s.page[s.n] = t, page
		if bare {
			s.bare |= 1 << uint(s.n)
			if !sp.has(t) {
				s.far |= 1 << uint(s.n)
			}
		}
		s.n++
	}
}

// span is a range of dates around the month (y, m): up to ahead years after
// it and behind years before it, by month (by year for a date without a
// month). A negative limit leaves that side open.
type span struct{ y, m, ahead, behind int }

// after reports whether t is more than sp.ahead years after sp's month.
func (sp span) after(t date) bool {
	if sp.ahead < 0 {
		return false
	}
	if t.m == 0 {
		return t.y > sp.y+sp.ahead
	}
	return t.y*12+t.m-1 > sp.y*12+sp.m-1+12*sp.ahead
}

// before reports whether t is more than sp.behind years before sp's month.
func (sp span) before(t date) bool {
	if sp.behind < 0 {
		return false
	}
	if t.m == 0 {
		return t.y < sp.y-sp.behind
	}
	return t.y*12+t.m-1 < sp.y*12+sp.m-1-12*sp.behind
}

// has reports whether t lies within sp.
func (sp span) has(t date) bool { return !sp.after(t) && !sp.before(t) }

// rangeSpan is the span the range half of the calendar rule accepts as of
// now.
func (d *Detector) rangeSpan(now time.Time) span {
	return span{now.Year(), int(now.Month()), d.cfg.yearsAhead, d.cfg.yearsBehind}
}

// bare returns the span within which a bare date (see scanDates) is taken
// for a date, given the range span sp: sp with the default for a limit that
// is switched off, so that switching the range check off does not turn
// every id into a date.
func (sp span) bare() span {
	if sp.ahead < 0 {
		sp.ahead = DefaultYearsAhead
	}
	if sp.behind < 0 {
		sp.behind = DefaultYearsBehind
	}
	return sp
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
//
// Ids take the same forms (/t/some-topic/1234/5 is post 5 of forum topic
// 1234, /product/2500/3 page 3 of a product), so a year and month alone are
// a bare date: one with no day, no calendar word among the path segments
// before it (/events/music/2031/01/) and, in the query, no parameter name
// that says date, year or month (?from=2031-01, ?year=2031; y, which also
// names a coordinate, only together with a month parameter). A bare date
// outside sp is a far bare date, an id unless a calendar walk leads to it
// (see calendarWalk). For the same reason a year is a number from 3000 up
// (see yearOf) only after a calendar word or in a parameter named for a
// date, year or month.
func scanDates(u *parsedURL, s *dateScan, sp span) {
	segs := u.segs
	n := len(segs)
	word := false // a calendar word is among segs[:i]
	for i := 0; i < n; i++ {
		seg := segs[i]
		// Checking segs[i-1] keeps word up to date: the segments a date
		// spans, skipped below, are numbers.
		after := i > 0 && calendarWord(segs[i-1])
		word = word || after
		if y, ok := yearOf(seg, word); ok {
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
					s.add(t, i+k == n, t.d == 0 && !word, sp)
					i += k - 1
					continue
				}
			}
			// A year alone is weak evidence even after a calendar word
			// (/events/1234 is as often an event's id), so only years
			// that calendars show count.
			if after && likelyYear(y) {
				s.segs |= bit(i)
				s.add(date{y, 0, 0}, i+1 == n, false, sp)
			}
			continue
		}
		if y, m, d, rest, ok := compactDateRest(seg, word); ok {
			s.segs |= bit(i)
			// 2031-01-15-some-title is an article; 2031-01-15.html a page.
			s.add(date{y, m, d}, i+1 == n && (rest == "" || rest[0] == '.'), d == 0 && !word, sp)
			continue
		}
		if after {
			if t, ok := eightDigitDate(seg); ok {
				s.segs |= bit(i)
				s.add(t, i+1 == n, false, sp)
			}
		}
	}

	yi, mi, di := -1, -1, -1
	var y, m, d int
	bareYear := false // the year parameter is named y
	it := params{rest: u.query, sep: '&'}
	for k := 0; it.next(); k++ {
		name, value := it.name, it.value
		named := nameIn(name, dateNames) || nameIn(name, yearNames) || nameIn(name, monthNames)
		if ty, tm, td, _, ok := compactDateRest(value, named); ok {
			s.parms |= bit(k)
			s.add(date{ty, tm, td}, true, td == 0 && !named, sp)
			continue
		}
		switch {
		case yi < 0 && nameIn(name, yearNames):
			if v, ok := yearOf(value, true); ok {
				yi, y = k, v
				bareYear = equalFold(name, "y")
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
				s.add(t, true, false, sp)
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
		s.add(t, true, bareYear && mi < 0, sp)
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

// yearOf parses a four-digit year from 1000 to 2999, or up to 9999 when
// wide. Four-digit ids are common and the calendar rule stops a walk long
// before 3000, so numbers from 3000 up are years only where a name says
// date (?year=3001; see scanDates).
func yearOf(s string, wide bool) (int, bool) {
	if len(s) != 4 || s[0] < '1' || s[0] > '9' || (s[0] > '2' && !wide) {
		return 0, false
	}
	return digits(s)
}

// likelyYear reports whether y is a year that dates on the web use, for
// the forms that are weak evidence of a date on their own.
func likelyYear(y int) bool { return y >= 1900 && y <= 2199 }

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
// YYYY-MM-DD, with '-' or '_' as separator, and a year up to 2999.
func compactDate(v string) (y, m, d int, ok bool) {
	y, m, d, _, ok = compactDateRest(v, false)
	return
}

// compactDateRest is compactDate that also returns what follows the date,
// with years as yearOf(wide) reads them. The date must end the string or be
// followed by a non-digit.
func compactDateRest(v string, wide bool) (y, m, d int, rest string, ok bool) {
	if len(v) < 7 {
		return
	}
	if y, ok = yearOf(v[:4], wide); !ok {
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
	if !likelyYear(t.y) || t.m < 1 || t.m > 12 || t.d < 1 || t.d > 31 {
		return date{}, false
	}
	return t, true
}

// dateRange implements the first half of the calendar rule: a date too far
// from now. Calendars generate links to the next and previous period without
// end; real sites rarely link far into the future, and the past is only
// suspicious for calendar pages, not dated articles (archives are real).
// sp is the range accepted (see Detector.rangeSpan); the dates whose bits
// are set in skip are not checked.
func dateRange(s *dateScan, sp span, skip uint8) Verdict {
	for i := 0; i < s.n; i++ {
		if skip&(1<<uint(i)) != 0 {
			continue
		}
		t := s.dates[i]
		if sp.after(t) {
			return reject(RuleCalendar, "YearsAhead", "date "+t.String()+" is more than "+itoa(sp.ahead)+" years after "+date{sp.y, sp.m, 0}.String())
		}
		if s.page[i] && sp.before(t) {
			return reject(RuleCalendar, "YearsBehind", "date "+t.String()+" is more than "+itoa(sp.behind)+" years before "+date{sp.y, sp.m, 0}.String())
		}
	}
	return Verdict{}
}

// stepsOut reports whether every far bare date of s is one step from the
// date in the same place of src, and that date is not far: one month or
// one year away, as a calendar's previous and next links are. A walk that
// leaves the span of bare dates steps out of it this way; ids that lie
// outside it (posts 2 and 3 of forum topic 2841) do not.
func stepsOut(s, src *dateScan) bool {
	if s.n != src.n {
		return false
	}
	for i := 0; i < s.n; i++ {
		b := uint8(1) << uint(i)
		if s.far&b == 0 {
			continue
		}
		if src.far&b != 0 || !oneStep(s.dates[i], src.dates[i]) {
			return false
		}
	}
	return true
}

// fromFar reports whether every far bare date of s has a far bare date in
// the same place of src: a link between pages beyond the span of bare
// dates, a step of a walk there as a link within it is.
func fromFar(s, src *dateScan) bool {
	return s.n == src.n && s.far&^src.far == 0
}

// oneStep reports whether a and b, neither with a day, are years one year
// apart or months one month or one year apart.
func oneStep(a, b date) bool {
	if a.d != 0 || b.d != 0 || (a.m == 0) != (b.m == 0) {
		return false
	}
	diff := a.y*12 + a.m - b.y*12 - b.m
	if diff < 0 {
		diff = -diff
	}
	return diff == 12 || (diff == 1 && a.m != 0)
}

// crossesYear reports whether a step from the dates of src to those of s
// crosses into another year by one step (see oneStep) in a bare date: from
// December to January, or by a year.
func crossesYear(s, src *dateScan) bool {
	if s.n != src.n {
		return false
	}
	for i := 0; i < s.n; i++ {
		if s.bare&(1<<uint(i)) != 0 && s.dates[i].y != src.dates[i].y && oneStep(s.dates[i], src.dates[i]) {
			return true
		}
	}
	return false
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
