package trap

import (
	"math/bits"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/publicsuffix"
)

// numShards splits the host and domain tables so that workers judging URLs
// of different hosts rarely wait for each other.
const numShards = 32

// Per-host caps on the learned tables besides the URL keys, so that a host
// that mints endless shapes cannot grow its state without bound.
const (
	maxPatternsPerHost = 1 << 14
	maxParamKeys       = 1024
	maxStepShapes      = 256
	maxContentPatterns = 512
	maxObserved        = 1 << 13
	maxDomainHostKeys  = 1 << 16
)

// hostState is what the detector has learned about one host. It is guarded
// by its shard's mutex.
type hostState struct {
	name       string
	prev, next *hostState // LRU list, most recent first

	budgets Budgets
	refused Verdict // domain-budget verdict, decided when the host is first seen
	full    bool    // the host budget was reached (its verdict was given)

	urls     map[uint64]struct{} // keys of accepted URLs (budgets count these)
	accepted int                 // accepted URLs, counted instead with DistinctCandidates
	patterns map[uint64]int32    // accepted URLs per budget pattern
	params   map[uint64]*valueSet
	steps    map[uint64]*valueSet
	repeats  map[uint64]*valueSet
	growth   map[uint64]int32    // fewest parts seen per growing parameter
	grown    map[uint64]struct{} // growing parameters stopped
	flagged  map[uint64]struct{} // (path, parameter) pairs seen with volatile values

	observed map[uint64]struct{} // URLs whose content was reported
	content  map[uint64]*contentStats
	marks    map[uint64]Verdict // content patterns stopped
	hostWide contentStats
	stopped  Verdict // why the whole host was stopped, if it was
}

// refusal returns the host's domain-budget verdict, marked First only the
// first time it is given.
func (hs *hostState) refusal() Verdict {
	v := hs.refused
	hs.refused.First = false
	return v
}

// acceptedURLs returns the number of URLs of the host counted against its
// budgets.
func (hs *hostState) acceptedURLs() int { return len(hs.urls) + hs.accepted }

// volatile reports whether parameter name on the path hashed to path is
// volatile: now (and then flagged), or flagged before. It requires that the
// shard's mutex is held.
func (hs *hostState) volatile(path uint64, name string, now bool) bool {
	k := mix(hashString(path, name))
	if now {
		if hs.flagged == nil {
			hs.flagged = make(map[uint64]struct{})
		}
		if len(hs.flagged) < maxParamKeys {
			hs.flagged[k] = struct{}{}
		}
		return true
	}
	_, ok := hs.flagged[k]
	return ok
}

// valueSet is a small set of hashes; learned rules keep at most their limit
// plus one values in it, so a linear scan is the fastest lookup.
type valueSet struct {
	v       []uint64
	crossed bool // calendar steps: a walk through bare dates crossed a year
	stopped bool // the limit was reached (its verdict was given)
}

func (s *valueSet) has(x uint64) bool {
	for _, y := range s.v {
		if y == x {
			return true
		}
	}
	return false
}

// contentStats counts the content reports of one content pattern (or of
// a whole host).
type contentStats struct {
	reports int
	same    groups // near fingerprint and the same links: the same page
	exact   groups // the same fingerprint, whatever the links
}

// groups clusters pages whose links hash to the same value and whose
// fingerprints lie within the Hamming distance of a group's first member.
// It keeps the eight largest groups seen.
type groups [8]struct {
	fp, links uint64
	cp        uint64 // content pattern of the first member
	n         int32
	spans     bool // members of more than one content pattern
}

// add counts a page of content pattern cp into its group and returns the
// group's size, its representative fingerprint and whether its members
// span more than one pattern.
func (g *groups) add(fp, links, cp uint64, dist int) (int, uint64, bool) {
	free, smallest := -1, 0
	for i := range g {
		if g[i].n == 0 {
			if free < 0 {
				free = i
			}
			continue
		}
		if g[i].links == links && bits.OnesCount64(g[i].fp^fp) <= dist {
			g[i].n++
			g[i].spans = g[i].spans || g[i].cp != cp
			return int(g[i].n), g[i].fp, g[i].spans
		}
		if g[i].n < g[smallest].n || g[smallest].n == 0 {
			smallest = i
		}
	}
	if free < 0 {
		if g[smallest].n > 1 {
			return 1, fp, false // every group repeats already; keep them
		}
		free = smallest
	}
	g[free].fp, g[free].links, g[free].cp, g[free].n, g[free].spans = fp, links, cp, 1, false
	return 1, fp, false
}

// hostShard is one part of the host table: a map with an LRU list.
type hostShard struct {
	mu       sync.Mutex
	m        map[string]*hostState
	head     *hostState
	tail     *hostState
	maxHosts int
	maxURLs  int // URL keys this shard may hold before evicting
	urls     int // URL keys held
}

func (s *hostShard) init(maxHosts, maxURLs int) {
	s.m = make(map[string]*hostState)
	s.maxHosts, s.maxURLs = maxHosts, maxURLs
}

func shardOf(key string) int { return int(hashString(offset64, key) % numShards) }

// host returns the state of host, creating it (and admitting it into its
// registrable domain) when it is new. It requires that s.mu is held.
func (s *hostShard) host(d *Detector, host string) *hostState {
	if hs, ok := s.m[host]; ok {
		s.touch(hs)
		return hs
	}
	hs := &hostState{name: strings.Clone(host)}
	dom := registrableDomain(hs.name)
	hs.budgets = d.cfg.budgetsFor(hs.name, dom)
	hs.refused = d.admitHost(hs.name, dom, hs.budgets)
	s.m[hs.name] = hs
	s.pushFront(hs)
	for len(s.m) > s.maxHosts && s.tail != hs {
		s.evict(s.tail)
	}
	return hs
}

// trim evicts least recently used hosts other than keep while the shard
// holds more URL keys than it may.
func (s *hostShard) trim(keep *hostState) {
	for s.urls > s.maxURLs && s.tail != nil && s.tail != keep {
		s.evict(s.tail)
	}
}

func (s *hostShard) touch(hs *hostState) {
	if s.head == hs {
		return
	}
	s.unlink(hs)
	s.pushFront(hs)
}

func (s *hostShard) pushFront(hs *hostState) {
	hs.prev, hs.next = nil, s.head
	if s.head != nil {
		s.head.prev = hs
	}
	s.head = hs
	if s.tail == nil {
		s.tail = hs
	}
}

func (s *hostShard) unlink(hs *hostState) {
	if hs.prev != nil {
		hs.prev.next = hs.next
	} else {
		s.head = hs.next
	}
	if hs.next != nil {
		hs.next.prev = hs.prev
	} else {
		s.tail = hs.prev
	}
	hs.prev, hs.next = nil, nil
}

func (s *hostShard) evict(hs *hostState) {
	s.unlink(hs)
	delete(s.m, hs.name)
	s.urls -= len(hs.urls)
}

// registrableDomain returns the eTLD+1 of host (without its port) per the
// public suffix list, or "" for IP addresses and names without a dot.
func registrableDomain(host string) string {
	h := host
	if strings.HasPrefix(h, "[") {
		return "" // IPv6 literal
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		h = h[:i]
	}
	h = strings.TrimSuffix(h, ".")
	if !strings.Contains(h, ".") || net.ParseIP(h) != nil {
		return ""
	}
	dom, err := publicsuffix.EffectiveTLDPlusOne(h)
	if err != nil {
		return ""
	}
	return dom
}

// domainState counts the hosts seen under one registrable domain.
type domainState struct {
	name       string
	prev, next *domainState
	hosts      map[uint64]struct{}
	count      int
	full       bool             // the domain's host budget was reached
	minted     map[uint64]int32 // hosts per folded subdomain pattern; one more once stopped
}

// domainShard is one part of the domain table: a map with an LRU list.
type domainShard struct {
	mu         sync.Mutex
	m          map[string]*domainState
	head, tail *domainState
	max        int
}

func (s *domainShard) init(max int) {
	s.m = make(map[string]*domainState)
	s.max = max
}

// domain returns the state of dom, creating it when new. It requires that
// s.mu is held.
func (s *domainShard) domain(dom string) *domainState {
	ds, ok := s.m[dom]
	if ok {
		if s.head != ds {
			s.unlink(ds)
			s.pushFront(ds)
		}
		return ds
	}
	ds = &domainState{name: dom, hosts: make(map[uint64]struct{})}
	s.m[dom] = ds
	s.pushFront(ds)
	for len(s.m) > s.max && s.tail != ds {
		old := s.tail
		s.unlink(old)
		delete(s.m, old.name)
	}
	return ds
}

func (s *domainShard) pushFront(ds *domainState) {
	ds.prev, ds.next = nil, s.head
	if s.head != nil {
		s.head.prev = ds
	}
	s.head = ds
	if s.tail == nil {
		s.tail = ds
	}
}

func (s *domainShard) unlink(ds *domainState) {
	if ds.prev != nil {
		ds.prev.next = ds.next
	} else {
		s.head = ds.next
	}
	if ds.next != nil {
		ds.next.prev = ds.prev
	} else {
		s.tail = ds.prev
	}
	ds.prev, ds.next = nil, nil
}

// admitHost counts a newly seen host into its registrable domain and
// returns the domain-budget verdict for it. Blog platforms (blogspot.com,
// github.io) are public suffixes, so their users' hosts are domains of their
// own and never share a budget; a farm that mints subdomains of its own
// domain does.
func (d *Detector) admitHost(host, dom string, b Budgets) Verdict {
	if dom == "" {
		return Verdict{}
	}
	defer d.changes.Add(1) // after the unlock: a Snapshot taken once it moved holds the change
	sh := &d.domains[shardOf(dom)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	ds := sh.domain(dom)
	hk := hashString(offset64, host)
	if _, ok := ds.hosts[hk]; ok {
		return Verdict{}
	}
	if b.DomainHosts >= 0 && ds.count >= b.DomainHosts {
		first := !ds.full
		ds.full = true
		return stop(RuleDomainBudget, "DomainHostBudget", ScopeDomain, dom, first,
			dom+" reached its budget of "+itoa(b.DomainHosts)+" hosts")
	}
	name := host
	if i := strings.LastIndexByte(name, ':'); i >= 0 && !strings.HasSuffix(name, "]") {
		name = name[:i]
	}
	if sub, ok := strings.CutSuffix(name, "."+dom); ok && b.MintedHosts >= 0 {
		if h := foldHash(offset64, sub); h != hashString(offset64, sub) {
			if ds.minted == nil {
				ds.minted = make(map[uint64]int32)
			}
			n, ok := ds.minted[h]
			if int(n) >= b.MintedHosts {
				var sb strings.Builder
				foldString(&sb, sub)
				first := int(n) == b.MintedHosts
				if first {
					ds.minted[h] = n + 1
				}
				pattern := sb.String() + "." + dom
				return stop(RuleDomainBudget, "MintedHostBudget", ScopePattern, pattern, first,
					pattern+" reached its budget of "+itoa(b.MintedHosts)+" minted hosts")
			}
			if ok || len(ds.minted) < maxDomainHostKeys {
				ds.minted[h] = n + 1
			}
		}
	}
	if len(ds.hosts) < maxDomainHostKeys {
		ds.hosts[hk] = struct{}{}
	}
	ds.count++
	return Verdict{}
}

// learned applies the rules that depend on what the detector has seen, and
// records an accepted URL.
func (d *Detector) learned(u *parsedURL, ds *dateScan, source string, now time.Time) Verdict {
	defer d.changes.Add(1) // after the unlock: a Snapshot taken once it moved holds the change
	sh := &d.hosts[shardOf(u.host)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	hs := sh.host(d, u.host)
	if hs.refused.Rejected() {
		return hs.refusal()
	}
	if hs.stopped.Rejected() {
		return hs.stopped
	}
	if len(hs.marks) > 0 {
		if v, ok := hs.marks[contentPatternHash(u)]; ok {
			return v
		}
	}
	key := urlKey(u)
	if _, ok := hs.urls[key]; ok {
		return Verdict{} // accepted before: counted once, accepted again
	}
	// The page the link was found on matters to the walk rules; it is
	// parsed only when the candidate could be part of a walk.
	var src *parsedURL
	var su parsedURL
	var buf segBuf
	if source != "" && (ds.n > 0 || u.query != "") && !d.parse(&su, source, &buf).Rejected() && su.host == u.host {
		if su.segs == nil {
			su.segs = buf[:su.nsegs]
		}
		src = &su
	}
	if v := d.calendarWalk(hs, u, ds, src, now); v.Rejected() {
		return v
	}
	if v := d.repeatingPath(hs, u); v.Rejected() {
		return v
	}
	if v := d.growingParam(hs, u, src); v.Rejected() {
		return v
	}

	b := hs.budgets
	if b.Host >= 0 && hs.acceptedURLs() >= b.Host {
		first := !hs.full
		hs.full = true
		return stop(RuleHostBudget, "HostBudget", ScopeHost, hs.name, first,
			"host "+hs.name+" reached its budget of "+itoa(b.Host)+" URLs")
	}
	ph := patternHash(u)
	count, tracked := hs.patterns[ph]
	if b.Pattern >= 0 && int(count) >= b.Pattern {
		// The count goes one past the budget to tell the first verdict.
		first := int(count) == b.Pattern
		if first && tracked {
			hs.patterns[ph] = count + 1
		}
		pattern := patternString(u)
		return stop(RulePatternBudget, "PatternBudget", ScopePattern, hs.name+pattern, first,
			pattern+" on "+hs.name+" reached its budget of "+itoa(b.Pattern)+" URLs")
	}
	// The URL's key is remembered up to the host's budget (the budget
	// check above keeps len(hs.urls) below it), even beyond
	// MaxTrackedURLs: other hosts are evicted instead. A host without a
	// budget keeps at most MaxTrackedURLs keys and counts the URLs after
	// them, as with DistinctCandidates, so that its pattern budgets still
	// hold.
	if !d.cfg.distinct && (b.Host >= 0 || len(hs.urls) < d.cfg.maxTrackedURLs) {
		if hs.urls == nil {
			hs.urls = make(map[uint64]struct{})
		}
		hs.urls[key] = struct{}{}
		sh.urls++
	} else {
		hs.accepted++
	}
	if hs.patterns == nil {
		hs.patterns = make(map[uint64]int32)
	}
	if tracked || len(hs.patterns) < maxPatternsPerHost {
		hs.patterns[ph] = count + 1
	}
	sh.trim(hs)
	return Verdict{}
}

// calendarWalk implements the second half of the calendar rule. A calendar
// page links to the previous and next period, and those to theirs, without
// end; a crawler walking such links sees a page of one shape link to the
// same shape with another date. Lists of dates (an archive index) are not
// walks and are not limited.
//
// A URL with far bare dates (see scanDates) is a walk when it steps out of
// the span of bare dates (see stepsOut); its dates are then checked against
// the range as the stateless half checks other dates. It is also a walk
// when its source's dates are far too (see fromFar): a calendar that a
// link took beyond the span in a jump (a year picker, a link from a page
// without a date) walks on there. Otherwise those dates are ids and the
// link is no step of a walk.
//
// Ids of items with pages step like bare dates (/product/2003/2 links to
// /product/2003/3, /t/topic/2841/2 to /t/topic/2841/3), but never from one
// "year" to the next, while a calendar crosses a year within twelve steps.
// So a walk through bare dates, far or not, is limited only once one of
// the shape's steps crossed a year (see crossesYear); its steps are
// counted before that, up to the limit.
func (d *Detector) calendarWalk(hs *hostState, u *parsedURL, ds *dateScan, src *parsedURL, now time.Time) Verdict {
	max := d.cfg.maxCalendarSteps
	if (max < 0 && ds.far == 0) || ds.n == 0 || src == nil {
		return Verdict{}
	}
	sp := d.rangeSpan(now)
	var ss dateScan
	scanDates(src, &ss, sp.bare())
	if ss.n == 0 {
		return Verdict{}
	}
	shape := shapeHash(u, ds)
	dk := dateKey(ds)
	if shape != shapeHash(src, &ss) || dk == dateKey(&ss) {
		return Verdict{}
	}
	if ds.far != 0 {
		switch {
		case stepsOut(ds, &ss):
			if v := dateRange(ds, sp, 0); v.Rejected() {
				return v
			}
		case !fromFar(ds, &ss):
			return Verdict{}
		}
	}
	if max < 0 {
		return Verdict{}
	}
	set := learnSet(&hs.steps, shape, maxStepShapes)
	if set.has(dk) {
		return Verdict{}
	}
	if ds.bare != 0 && !set.crossed && crossesYear(ds, &ss) {
		set.crossed = true
	}
	if len(set.v) >= max {
		if ds.bare != 0 && !set.crossed {
			return Verdict{}
		}
		first := !set.stopped
		set.stopped = true
		shape := shapeString(u, ds)
		return stop(RuleCalendar, "MaxCalendarSteps", ScopePattern, hs.name+shape, first,
			itoa(len(set.v)+1)+" dates reached by walking "+shape+", limit "+itoa(max))
	}
	set.v = append(set.v, dk)
	return Verdict{}
}

// growingParam implements the growing-param rule: a parameter whose value
// is generated per link (a timestamp, a counter, a random token) makes every
// link new while the page stays the same.
func (d *Detector) growingParam(hs *hostState, u *parsedURL, src *parsedURL) Verdict {
	max := d.cfg.maxParamValues
	if u.query == "" {
		return Verdict{}
	}
	if key, val, ok := growingKey(u, hs); ok && max >= 0 {
		set := learnSet(&hs.params, key, maxParamKeys)
		if !set.has(val) {
			if len(set.v) >= max {
				first := !set.stopped
				set.stopped = true
				names, shape := growingDescription(u, hs)
				return stop(RuleGrowingParam, "MaxParamValues", ScopePattern, hs.name+shape, first,
					names+" took "+itoa(len(set.v)+1)+" values on "+shape+", limit "+itoa(max))
			}
			set.v = append(set.v, val)
		}
	}
	max2 := d.cfg.maxParamGrowth
	if max2 < 0 || src == nil || src.path != u.path || src.query == "" {
		return Verdict{}
	}
	// A value that extends the value on the page it was found on by more
	// parts (q=shoes → q=shoes+red → q=shoes+red+size-9 …): the parameter
	// grows by a step per link. Faceted filters grow like this too, but
	// only by as many steps as there are facets.
	qc, qs := querySum(u.query), querySum(src.query)
	it := params{rest: u.query, sep: '&'}
	for it.next() {
		others := qc - paramHash(it.name, it.value)
		sv, ok := paramValue(src.query, it.name)
		if !ok || sv == "" || len(it.value) <= len(sv) || !strings.HasPrefix(it.value, sv) ||
			qs-paramHash(it.name, sv) != others {
			continue
		}
		from, to := valueParts(sv), valueParts(it.value)
		if to <= from {
			continue
		}
		key := mix(hashString(offset64, u.path)^others) + mix(hashString(offset64, it.name))
		if hs.growth == nil {
			hs.growth = make(map[uint64]int32)
		}
		base, ok := hs.growth[key]
		if !ok || int32(from) < base {
			if !ok && len(hs.growth) >= maxParamKeys {
				for k := range hs.growth {
					delete(hs.growth, k)
					break
				}
			}
			base = int32(from)
			hs.growth[key] = base
		}
		if g := to - int(base); g > max2 {
			_, done := hs.grown[key]
			if !done && len(hs.grown) < maxParamKeys {
				if hs.grown == nil {
					hs.grown = make(map[uint64]struct{})
				}
				hs.grown[key] = struct{}{}
			}
			shape := replaceParam(u, it.name)
			return stop(RuleGrowingParam, "MaxParamGrowth", ScopePattern, hs.name+shape, !done,
				strconv.Quote(it.name)+" grew "+itoa(g)+" times on "+shape+", limit "+itoa(max2))
		}
	}
	return Verdict{}
}

// valueParts counts the parts of a query value: words and list items
// separated by '+', ',', ';', '|', '/', ' ' or their percent-encodings.
func valueParts(v string) int {
	n := 1
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '+', ',', ';', '|', '/', ' ':
			n++
		case '%':
			if i+2 < len(v) {
				switch strings.ToUpper(v[i+1 : i+3]) {
				case "20", "2C", "3B", "7C", "2F", "2B":
					n++
					i += 2
				}
			}
		}
	}
	return n
}

// repeatingPath implements the learned half of the repeated-segments rule.
// Relative links that nest a directory into itself (/loop/a/ → /loop/a/b/ →
// /loop/a/b/a/ …) build paths from a few segments in ever new orders, which
// the per-path limits cannot stop soon enough. So a host may have only a few
// paths that repeat a non-numeric segment and are made of one set of
// segments. Real paths that repeat a word (src/main/…/main) add new words
// as they go deeper and so fall into sets of their own. Paths are counted,
// not URLs: the query variants of one path (its pages, its languages) are
// one path, since a loop nests the path, not the query.
func (d *Detector) repeatingPath(hs *hostState, u *parsedURL) Verdict {
	max := d.cfg.maxRepeatingPaths
	if max < 0 {
		return Verdict{}
	}
	var set uint64 // order-independent hash of the distinct segments
	repeats := false
	for i, seg := range u.segs {
		seen := false
		for _, prev := range u.segs[:i] {
			if prev == seg {
				seen = true
				break
			}
		}
		if !seen {
			set += mix(hashString(offset64, seg))
		} else if _, num := digits(seg); !num {
			repeats = true
		}
	}
	if !repeats {
		return Verdict{}
	}
	key := mix(hashString(offset64, u.path))
	vs := learnSet(&hs.repeats, set, maxStepShapes)
	if vs.has(key) {
		return Verdict{}
	}
	if len(vs.v) >= max {
		var names []string
		for i, seg := range u.segs {
			dup := false
			for _, prev := range u.segs[:i] {
				dup = dup || prev == seg
			}
			if !dup {
				names = append(names, seg)
			}
		}
		first := !vs.stopped
		vs.stopped = true
		slices.Sort(names) // one set, one name: the target must not depend on the order
		made := "{" + strings.Join(names, ", ") + "}"
		return stop(RuleRepeatedSegments, "MaxRepeatingPaths", ScopePattern, hs.name+"/"+made, first,
			itoa(len(vs.v)+1)+" paths made of "+made+" repeat a segment, limit "+itoa(max))
	}
	vs.v = append(vs.v, key)
	return Verdict{}
}

// learnSet returns the value set of key in *m, creating the map and the set
// as needed; when the map is full an arbitrary entry makes room.
func learnSet(m *map[uint64]*valueSet, key uint64, max int) *valueSet {
	if set, ok := (*m)[key]; ok {
		return set
	}
	if *m == nil {
		*m = make(map[uint64]*valueSet)
	}
	if len(*m) >= max {
		for k := range *m {
			delete(*m, k)
			break
		}
	}
	set := &valueSet{}
	(*m)[key] = set
	return set
}

// observe records a content report for u; links is the hash of its links
// (linkHash), meaningful only when known is true.
func (d *Detector) observe(u *parsedURL, fp, links uint64, known bool) Verdict {
	defer d.changes.Add(1) // after the unlock: a Snapshot taken once it moved holds the change
	sh := &d.hosts[shardOf(u.host)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	hs := sh.host(d, u.host)
	if hs.refused.Rejected() {
		return hs.refusal()
	}
	cp := contentPatternHash(u)
	var v Verdict
	switch {
	case hs.stopped.Rejected():
	case d.cfg.distinct:
		v = d.countContent(hs, u, cp, fp, links, known)
	default:
		key := urlKey(u)
		if _, seen := hs.observed[key]; !seen {
			if hs.observed == nil {
				hs.observed = make(map[uint64]struct{})
			}
			if len(hs.observed) < maxObserved {
				hs.observed[key] = struct{}{}
			}
			v = d.countContent(hs, u, cp, fp, links, known)
		}
	}
	switch {
	case v.Rejected():
		return v
	case hs.stopped.Rejected():
		return hs.stopped
	}
	return hs.marks[cp]
}

// countContent counts one page into its pattern's and its host's groups and
// stops the pattern or the host when one group has become both large and
// the majority of the reports: a soft-404 or a mirror answers most URLs
// alike, while a real site has a few near-duplicates among many distinct
// pages. Similar text alone is no evidence: a template can dominate the
// text of distinct pages, so that their SimHashes lie within a few bits.
// So a group is either the same page (near fingerprints and the same links,
// written relative to the page, as one template served at many URLs has)
// or identical text (the same fingerprint, whatever the links, as a maze
// that mints a new link per page has). It returns the verdict that a stop
// established, if any.
func (d *Detector) countContent(hs *hostState, u *parsedURL, cp, fp, links uint64, known bool) Verdict {
	var v Verdict
	if r := d.cfg.contentRepeats; r > 0 {
		st := hs.content[cp]
		if st == nil && len(hs.content) < maxContentPatterns {
			if hs.content == nil {
				hs.content = make(map[uint64]*contentStats)
			}
			st = &contentStats{}
			hs.content[cp] = st
		}
		if st != nil {
			if _, marked := hs.marks[cp]; !marked {
				if n, what, ok := d.repeats(st, cp, fp, links, known, r, false); ok {
					pattern := contentPatternString(u)
					v = stop(RuleContentRepetition, "ContentRepeats", ScopePattern, hs.name+pattern, true,
						itoa(n)+" URLs under "+pattern+" served "+what)
					if hs.marks == nil {
						hs.marks = make(map[uint64]Verdict)
					}
					hs.marks[cp] = later(v)
				}
			}
		}
	}
	if r := d.cfg.hostRepeats; r > 0 {
		if n, what, ok := d.repeats(&hs.hostWide, cp, fp, links, known, r, true); ok {
			v = stop(RuleContentRepetition, "HostContentRepeats", ScopeHost, hs.name, true,
				itoa(n)+" URLs of "+hs.name+" served "+what)
			hs.stopped = later(v)
		}
	}
	return v
}

// repeats counts a page of content pattern cp into st and reports whether
// one of its groups now holds at least r pages and half of the reports,
// with the group's size and what its pages served, for the reason. With
// spread the group must also span more than one pattern: a host is
// stopped as a whole only for what its patterns' own limits cannot see, so
// that a run of soft 404s early in a crawl stops their pattern, not the
// site.
func (d *Detector) repeats(st *contentStats, cp, fp, links uint64, known bool, r int, spread bool) (int, string, bool) {
	st.reports++
	if known {
		dist := max(d.cfg.contentDist, 0)
		n, rep, spans := st.same.add(fp, links, cp, dist)
		if n >= r && 2*n >= st.reports && (spans || !spread) {
			return n, "the same page (simhash " + hex64(rep) + ", same links)", true
		}
	}
	n, rep, spans := st.exact.add(fp, 0, cp, 0)
	if n >= r && 2*n >= st.reports && (spans || !spread) {
		return n, "identical content (simhash " + hex64(rep) + ")", true
	}
	return 0, "", false
}

func hex64(x uint64) string {
	s := strconv.FormatUint(x, 16)
	return "0x" + strings.Repeat("0", 16-len(s)) + s
}
