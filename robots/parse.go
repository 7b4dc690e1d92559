package robots

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// Record kinds recognised by the parser.
type recordKind uint8

const (
	recUnknown recordKind = iota
	recUserAgent
	recAllow
	recDisallow
	recSitemap
	recCrawlDelay
)

// builder holds the state of the group structure while lines are read.
//
// Grouping follows RFC 9309 §2.1 as the reference parser reads it: a group
// is one or more user-agent lines followed by rules; a user-agent line that
// follows a rule starts a new group, while any other record (Sitemap,
// Crawl-delay, unknown lines, blank lines) leaves the current group open.
// Rules before the first user-agent line belong to no group and are ignored.
type builder struct {
	p       *Policy
	google  bool
	inGroup bool // a user-agent line has been seen
	sepSeen bool // a rule has been seen since the current group's user-agent lines
	cur     int  // index of the current group in p.groups

	pending []string // agents of the current group with no Crawl-delay yet
}

// parse reads body into p. It runs in time linear in len(body).
func parse(p *Policy, body string) {
	google := p.opts.google
	switch {
	case strings.HasPrefix(body, "\xef\xbb\xbf"):
		body = body[3:]
	case google && strings.HasPrefix(body, "\xef\xbb"):
		body = body[2:]
	case google && strings.HasPrefix(body, "\xef"):
		body = body[1:]
	}
	b := builder{p: p, google: google}
	lineNo := 0
	for len(body) > 0 {
		// Lines end at CR, LF or CRLF (RFC 9309 §2.2, EOL).
		i := 0
		for i < len(body) && body[i] != '\n' && body[i] != '\r' {
			i++
		}
		line := body[:i]
		switch {
		case i == len(body):
			body = body[i:]
		case body[i] == '\r' && i+1 < len(body) && body[i+1] == '\n':
			body = body[i+2:]
		default:
			body = body[i+1:]
		}
		lineNo++
		b.line(line, lineNo)
	}
}

// line handles one line of the file.
func (b *builder) line(line string, lineNo int) {
	if b.google && len(line) > googleMaxLineLen {
		line = line[:googleMaxLineLen]
	}
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	line = trimWS(line)
	if line == "" {
		return
	}
	var key, value string
	if i := strings.IndexByte(line, ':'); i >= 0 {
		key, value = trimWS(line[:i]), trimWS(line[i+1:])
	} else if b.google {
		// Google accepts white space instead of the colon when the line is
		// exactly a key and a value.
		i := strings.IndexAny(line, " \t")
		if i < 0 {
			return
		}
		key, value = line[:i], trimWS(line[i:])
		if strings.ContainsAny(value, " \t") {
			return
		}
	} else {
		return
	}
	switch b.classify(key) {
	case recUserAgent:
		b.userAgent(value)
	case recAllow:
		b.rule(true, value, lineNo)
	case recDisallow:
		b.rule(false, value, lineNo)
	case recSitemap:
		if value != "" {
			b.p.sitemaps = append(b.p.sitemaps, value)
		}
	case recCrawlDelay:
		b.crawlDelay(value)
	default:
		b.extension(key, value, lineNo)
	}
}

// classify maps a record key to its kind. Keys are case-insensitive (RFC
// 9309 §2.2). With the Google extensions, keys are matched by prefix and a
// few common misspellings are accepted, as Google's parser does.
func (b *builder) classify(key string) recordKind {
	if !b.google {
		switch {
		case strings.EqualFold(key, "user-agent"):
			return recUserAgent
		case strings.EqualFold(key, "allow"):
			return recAllow
		case strings.EqualFold(key, "disallow"):
			return recDisallow
		case strings.EqualFold(key, "sitemap"):
			return recSitemap
		case strings.EqualFold(key, "crawl-delay"):
			return recCrawlDelay
		}
		return recUnknown
	}
	switch {
	case hasPrefixFold(key, "user-agent"), hasPrefixFold(key, "useragent"), hasPrefixFold(key, "user agent"):
		return recUserAgent
	case hasPrefixFold(key, "allow"):
		return recAllow
	case hasPrefixFold(key, "disallow"), hasPrefixFold(key, "dissallow"), hasPrefixFold(key, "dissalow"),
		hasPrefixFold(key, "disalow"), hasPrefixFold(key, "diasllow"), hasPrefixFold(key, "disallaw"):
		return recDisallow
	case hasPrefixFold(key, "sitemap"), hasPrefixFold(key, "site-map"):
		return recSitemap
	case strings.EqualFold(key, "crawl-delay"):
		return recCrawlDelay
	}
	return recUnknown
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// userAgent handles a user-agent line.
func (b *builder) userAgent(value string) {
	if !b.inGroup || b.sepSeen {
		b.p.groups = append(b.p.groups, group{})
		b.cur = len(b.p.groups) - 1
		b.inGroup, b.sepSeen = true, false
		b.pending = b.pending[:0]
	}
	agent := agentToken(value)
	if agent == "" {
		return
	}
	if b.p.agents == nil {
		b.p.agents = make(map[string]*AgentRules)
	}
	a, ok := b.p.agents[agent]
	if !ok {
		a = &AgentRules{policy: b.p, agent: agent}
		b.p.agents[agent] = a
	}
	if n := len(a.groups); n == 0 || a.groups[n-1] != b.cur {
		a.groups = append(a.groups, b.cur)
	}
	b.pending = append(b.pending, agent)
}

// agentToken extracts the product token a user-agent value names (RFC 9309
// §2.2.1): "*" for the catch-all, else the value up to its first character
// outside [A-Za-z_-], lower-cased. "Mozilla/5.0 (compatible; X)" names
// "mozilla"; "FooBot/1.2" names "foobot".
func agentToken(value string) string {
	if value == "*" || strings.HasPrefix(value, "*") && (value[1] == ' ' || value[1] == '\t') {
		return "*"
	}
	i := 0
	for i < len(value) && isTokenChar(value[i]) {
		i++
	}
	return strings.ToLower(value[:i])
}

// rule handles an Allow or Disallow line.
func (b *builder) rule(allow bool, value string, lineNo int) {
	if !b.inGroup {
		return // RFC 9309 §2.1: rules outside a group are ignored
	}
	// Any rule line, even an empty one, closes the run of user-agent lines.
	b.sepSeen = true
	if value == "" {
		// An empty rule matches nothing (RFC 9309 §2.2.2).
		return
	}
	b.addRule(Rule{Allow: allow, Pattern: value, Line: lineNo})
	if allow && b.google {
		// Google treats "Allow: /dir/index.htm(l)" as also allowing "/dir/".
		if i := strings.LastIndexByte(value, '/'); i >= 0 && strings.HasPrefix(value[i:], "/index.htm") {
			b.addRule(Rule{Allow: true, Pattern: value[:i+1] + "$", Line: lineNo})
		}
	}
}

func (b *builder) addRule(r Rule) {
	b.p.rules = append(b.p.rules, r)
	g := &b.p.groups[b.cur]
	g.rules = append(g.rules, int32(len(b.p.rules)-1))
}

// crawlDelay handles a Crawl-delay line: it applies to the agents of the
// group that have no delay yet, or, if there are none, again to the agents
// of the previous Crawl-delay line (the larger value wins). The value is a
// decimal number of seconds, optionally with a fraction and an exponent. An
// unreadable or negative value is skipped without affecting the rest of the
// file; one too large for a float64 counts as the largest float64.
func (b *builder) crawlDelay(value string) {
	if !b.inGroup || !isDecimal(value) {
		return
	}
	v, err := strconv.ParseFloat(value, 64)
	if err != nil && math.IsInf(v, 1) && errors.Is(err, strconv.ErrRange) {
		// A number too large for a float64 is a very long delay, not an
		// unreadable one: keep it so CrawlDelay reports it as Exceeded.
		v, err = math.MaxFloat64, nil
	}
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	g := &b.p.groups[b.cur]
	if len(b.pending) > 0 {
		g.delays = append(g.delays, delayRun{agents: append([]string(nil), b.pending...), seconds: v})
		b.pending = b.pending[:0]
		return
	}
	// Raising the last run's value is O(1), so a file of many Crawl-delay
	// lines after many user-agent lines stays linear.
	if n := len(g.delays); n > 0 && v > g.delays[n-1].seconds {
		g.delays[n-1].seconds = v
	}
}

// isDecimal reports whether s is made only of the octets of a decimal
// number ("12", "0.5", "1e3", "-1"). strconv.ParseFloat, which then reads
// it, also accepts Go literal syntax: underscores between digits ("1_0" is
// 10), hexadecimal mantissas ("0x1p4" is 16), "Inf" and "NaN".
func isDecimal(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '.', c == 'e', c == 'E', c == '+', c == '-':
		default:
			return false
		}
	}
	return s != ""
}

// trimWS trims the white space RFC 9309's ABNF allows around keys and
// values (space and tab), and the other ASCII spaces Google's parser trims.
func trimWS(s string) string {
	i, j := 0, len(s)
	for i < j && isWS(s[i]) {
		i++
	}
	for j > i && isWS(s[j-1]) {
		j--
	}
	return s[i:j]
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\v' || c == '\f' }
