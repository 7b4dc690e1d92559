package robots

import (
	"bytes"
	"slices"
	"sort"
	"strings"
)

// This file decides matches itself rather than through temoto/robotstxt's
// Group.Test: temoto tries every rule's regular expression in turn (tens of
// microseconds per URL on a 10 KB file), measures wildcard specificity on
// the compiled regular expression, does not anchor wildcard patterns at the
// path start, lets the first of two equally long rules win instead of Allow,
// and compares percent-encoded and literal forms as different strings.
//
// Here each rule is split at its first "*" into a literal prefix and a
// wildcard remainder. Literal prefixes go into a radix tree, so one walk
// along the URL path finds every rule whose prefix matches. Rules without a
// remainder are decided by the walk alone; the few with one are tried only
// if they could beat the best rule found so far, longest first, after a
// bigram filter.

// crule is a compiled rule.
type crule struct {
	idx      int32 // index into Policy.rules
	spec     int32 // specificity: octet length of the pattern as written
	allow    bool
	anchored bool     // pattern ended with "$"
	segs     []string // wildcard remainder: literal segments after the prefix, separated by "*"
	grams    []uint16 // a few bigram hashes that occur in segs (a cheap necessary condition)
}

// better reports whether a takes precedence over b: longer pattern first,
// then Allow over Disallow (RFC 9309 §2.2.2), then the earlier line, so the
// result never depends on map or sort order.
func (a *crule) better(b *crule) bool {
	if a.spec != b.spec {
		return a.spec > b.spec
	}
	if a.allow != b.allow {
		return a.allow
	}
	return a.idx < b.idx
}

// node is a radix tree node. The path from the root spells a canonical
// literal prefix.
type node struct {
	label string   // edge label from the parent
	first []byte   // first byte of each child's label, parallel to kids
	kids  []*node  //
	pre   int32    // best rule whose whole pattern is this literal prefix (-1: none)
	exact int32    // best rule "<this prefix>$" (-1: none)
	wild  []int32  // rules with this literal prefix and a wildcard remainder, best first
	wkey  []uint16 // first bigram hash of each wild rule (noGram if none), parallel to wild
}

// noGram marks a wildcard rule without a bigram to filter on.
const noGram = 0xFFFF

type matcher struct {
	root  node
	rules []crule
	// wildSeen maps a wildcard rule's literal prefix, verdict and
	// remainder to its position in its node's wild list, to fold
	// duplicates in constant time.
	wildSeen map[string]int
}

func newNode(label string) *node { return &node{label: label, pre: -1, exact: -1} }

// compileRules builds the matcher for the rules of one agent.
func compileRules(all []Rule, idx []int32) *matcher {
	m := &matcher{root: node{pre: -1, exact: -1}}
	m.rules = make([]crule, 0, len(idx))
	for _, i := range idx {
		m.add(all[i], i)
	}
	m.wildSeen = nil
	m.sortWild(&m.root)
	return m
}

// add compiles one rule into the tree.
func (m *matcher) add(r Rule, i int32) {
	pat := r.Pattern
	spec := specificity(pat)
	if pat[0] != '/' && pat[0] != '*' {
		// Patterns must start with "/" (RFC 9309 §2.2.2); read "fish" as
		// "/fish" rather than as a rule that can never match.
		pat = "/" + pat
		spec++
	}
	c := crule{idx: i, spec: int32(spec), allow: r.Allow}
	// Only a final "$" is an anchor; elsewhere it is a literal character.
	if strings.HasSuffix(pat, "$") {
		c.anchored = true
		pat = pat[:len(pat)-1]
	}
	// A trailing "*" adds nothing to a prefix match; "/a*$" is "/a".
	if t := strings.TrimRight(pat, "*"); len(t) != len(pat) {
		pat, c.anchored = t, false
	}
	prefix, rest, wild := strings.Cut(pat, "*")
	n := m.insert(canon(prefix))
	if wild {
		c.segs = make([]string, 0, strings.Count(rest, "*")+1)
		for more := true; more; {
			var s string
			s, rest, more = strings.Cut(rest, "*")
			if s != "" { // "**" is "*"
				c.segs = append(c.segs, canon(s))
			}
		}
		c.grams = pickGrams(c.segs)
	}
	ci := int32(len(m.rules))
	m.rules = append(m.rules, c)
	switch {
	case wild:
		// An identical wildcard rule already at this node makes one of the
		// two redundant: keep the better.
		key := wildKey(canon(prefix), &c)
		if k, ok := m.wildSeen[key]; ok {
			if c.better(&m.rules[n.wild[k]]) {
				n.wild[k] = ci
			}
			return
		}
		if m.wildSeen == nil {
			m.wildSeen = make(map[string]int)
		}
		m.wildSeen[key] = len(n.wild)
		n.wild = append(n.wild, ci)
	case c.anchored:
		if n.exact < 0 || c.better(&m.rules[n.exact]) {
			n.exact = ci
		}
	default:
		if n.pre < 0 || c.better(&m.rules[n.pre]) {
			n.pre = ci
		}
	}
}

// wildKey identifies what a wildcard rule matches and its verdict.
// Canonical strings never contain a raw NUL (it is percent-encoded), so NUL
// separates the parts unambiguously.
func wildKey(prefix string, c *crule) string {
	var b strings.Builder
	b.WriteString(prefix)
	b.WriteByte(0)
	flags := byte('0')
	if c.allow {
		flags |= 1
	}
	if c.anchored {
		flags |= 2
	}
	b.WriteByte(flags)
	for _, s := range c.segs {
		b.WriteByte(0)
		b.WriteString(s)
	}
	return b.String()
}

// specificity is the octet length of a pattern as written, counting each
// non-ASCII octet as its percent-encoded form (three octets), as the
// reference parser does after escaping the pattern.
func specificity(pat string) int {
	n := len(pat)
	for i := 0; i < len(pat); i++ {
		if pat[i] >= 0x80 {
			n += 2
		}
	}
	return n
}

// insert returns the node for the literal key, creating it if needed.
func (m *matcher) insert(key string) *node {
	n := &m.root
	for key != "" {
		i := bytes.IndexByte(n.first, key[0])
		if i < 0 {
			c := newNode(key)
			n.first = append(n.first, key[0])
			n.kids = append(n.kids, c)
			return c
		}
		c := n.kids[i]
		l := commonPrefix(c.label, key)
		if l < len(c.label) {
			// Split the edge at l.
			mid := newNode(c.label[:l])
			c.label = c.label[l:]
			mid.first = []byte{c.label[0]}
			mid.kids = []*node{c}
			n.kids[i] = mid
			c = mid
		}
		n, key = c, key[l:]
	}
	return n
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// sortWild orders every node's wildcard rules best first, so a lookup can
// stop at the first one that cannot beat the best rule found so far.
func (m *matcher) sortWild(n *node) {
	if len(n.wild) > 1 {
		sort.Slice(n.wild, func(i, j int) bool { return m.rules[n.wild[i]].better(&m.rules[n.wild[j]]) })
	}
	if len(n.wild) > 0 {
		n.wkey = make([]uint16, len(n.wild))
		for k, ci := range n.wild {
			n.wkey[k] = noGram
			if g := m.rules[ci].grams; len(g) > 0 {
				n.wkey[k] = g[0]
			}
		}
	}
	for _, c := range n.kids {
		m.sortWild(c)
	}
}

// match returns the index (into Policy.rules) of the rule that decides
// path, or -1 if none matches. path is a path with optional query.
func (m *matcher) match(path string) int32 {
	path = canon(path)
	type cand struct {
		n   *node
		pos int
	}
	var (
		cands [8]cand
		nc    int
		best  int32 = -1
		set   gramSet
		setOK bool
	)
	pick := func(ci int32) {
		if best < 0 || m.rules[ci].better(&m.rules[best]) {
			best = ci
		}
	}
	n, pos := &m.root, 0
	for {
		if n.pre >= 0 {
			pick(n.pre)
		}
		if pos == len(path) && n.exact >= 0 {
			pick(n.exact)
		}
		if len(n.wild) > 0 {
			if nc < len(cands) {
				cands[nc] = cand{n, pos}
				nc++
			} else {
				best = m.tryWild(n, path, pos, best, &set, &setOK)
			}
		}
		if pos == len(path) {
			break
		}
		i := childIndex(n.first, path[pos])
		if i < 0 {
			break
		}
		c := n.kids[i]
		if !strings.HasPrefix(path[pos:], c.label) {
			break
		}
		n, pos = c, pos+len(c.label)
	}
	// Deeper candidates first: their patterns tend to be longer, which
	// raises the bar for the rest sooner.
	for i := nc - 1; i >= 0; i-- {
		best = m.tryWild(cands[i].n, path, cands[i].pos, best, &set, &setOK)
	}
	if best < 0 {
		return -1
	}
	return m.rules[best].idx
}

// childIndex returns the index of c in first, or -1. Most nodes have a
// handful of children, for which a plain loop beats the call into
// bytes.IndexByte.
func childIndex(first []byte, c byte) int {
	if len(first) > 16 {
		return bytes.IndexByte(first, c)
	}
	for i, f := range first {
		if f == c {
			return i
		}
	}
	return -1
}

// fewWild is the number of wildcard rules at a node below which they are
// matched directly, without building the path's bigram set.
const fewWild = 4

// tryWild tries n's wildcard rules against path[pos:] and returns the new
// best rule.
func (m *matcher) tryWild(n *node, path string, pos int, best int32, set *gramSet, setOK *bool) int32 {
	if len(n.wild) < fewWild {
		for _, ci := range n.wild {
			r := &m.rules[ci]
			if best >= 0 && !r.better(&m.rules[best]) {
				break
			}
			if globMatch(r.segs, r.anchored, path[pos:]) {
				return ci
			}
		}
		return best
	}
	if !*setOK {
		set.addString(path)
		*setOK = true
	}
	for k, ci := range n.wild {
		// The compact key scan rejects most rules without touching them;
		// skipping a rule that cannot match never changes the answer.
		if h := n.wkey[k]; h != noGram && !set.has(h) {
			continue
		}
		r := &m.rules[ci]
		if best >= 0 && !r.better(&m.rules[best]) {
			break // the rest are no better
		}
		if !set.hasAll(r.grams) {
			continue
		}
		if globMatch(r.segs, r.anchored, path[pos:]) {
			return ci
		}
	}
	return best
}

// globMatch matches "*s1*s2...*sn" (and a final "$" when anchored) against
// s. Taking each segment at its leftmost occurrence is optimal for patterns
// whose only wildcard is "*", so this runs in linear time per segment.
func globMatch(segs []string, anchored bool, s string) bool {
	last := len(segs)
	if anchored {
		last--
	}
	for _, seg := range segs[:last] {
		i := strings.Index(s, seg)
		if i < 0 {
			return false
		}
		s = s[i+len(seg):]
	}
	if anchored {
		return strings.HasSuffix(s, segs[last])
	}
	return true
}

// gramSet is a 1024-bit set of hashed bigrams (pairs of adjacent octets).
// A pattern segment can only occur in a path containing all its bigrams, so
// checking a few of them rejects most non-matching wildcard rules with a few
// bit tests instead of a substring search.
type gramSet [16]uint64

func gramHash(a, b byte) uint16 { return (uint16(a)<<3 ^ uint16(b)) & 1023 }

func (g *gramSet) addString(s string) {
	for i := 1; i < len(s); i++ {
		h := gramHash(s[i-1], s[i])
		g[h>>6] |= 1 << (h & 63)
	}
}

func (g *gramSet) has(h uint16) bool { return g[h>>6]&(1<<(h&63)) != 0 }

func (g *gramSet) hasAll(hs []uint16) bool {
	for _, h := range hs {
		if g[h>>6]&(1<<(h&63)) == 0 {
			return false
		}
	}
	return true
}

// pickGrams chooses up to four bigram hashes of segs: the last and first
// bigram of each segment (the ends of a pattern segment are what tells
// similar rules apart, such as "/item1" and "/item2"), without repeats.
func pickGrams(segs []string) []uint16 {
	var out []uint16
	add := func(h uint16) {
		if len(out) < 4 && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	for _, s := range segs {
		if len(s) >= 2 {
			add(gramHash(s[len(s)-2], s[len(s)-1]))
			add(gramHash(s[0], s[1]))
		}
	}
	for _, s := range segs {
		for i := 1; i < len(s); i++ {
			add(gramHash(s[i-1], s[i]))
		}
	}
	return out
}

// Canonical form for comparison (RFC 9309 §2.2.2): octets that may not
// appear raw in a URI (non-ASCII, controls, space, and `"<>\^`{|}`) are
// percent-encoded; percent-encoded unreserved characters are decoded, and so
// are "%2A" and "%24", which §2.2.3 says stand for a literal "*" and "$"
// (in a rule they are never wildcards: the wildcard split happens before
// canonicalisation); any other escape keeps its encoded form with upper-case
// hex digits, so "%2F" stays distinct from "/". A "%" not followed by two
// hex digits is kept as is.

const upperHex = "0123456789ABCDEF"

// rawOK[c] is true for the octets that stand for themselves in a URI:
// unreserved, reserved and "%" (RFC 3986 §2).
var rawOK = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "-._~:/?#[]@!$&'()*+,;=%" {
		t[c] = true
	}
	return t
}()

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// decodesTo reports whether the escape of c is decoded in canonical form.
func decodesTo(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~' || c == '*' || c == '$'
}

// canon returns the canonical form of s, or s itself when it is already
// canonical (the common case, which costs one scan and no allocation).
func canon(s string) string {
	i := canonPrefix(s)
	if i == len(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			hi, ok1 := unhex(at(s, i+1))
			lo, ok2 := unhex(at(s, i+2))
			if !ok1 || !ok2 {
				b = append(b, '%')
				continue
			}
			v := hi<<4 | lo
			if decodesTo(v) {
				b = append(b, v)
			} else {
				b = append(b, '%', upperHex[hi], upperHex[lo])
			}
			i += 2
		case rawOK[c]:
			b = append(b, c)
		default:
			b = append(b, '%', upperHex[c>>4], upperHex[c&15])
		}
	}
	return string(b)
}

// canonPrefix returns the length of the longest prefix of s that canon
// leaves as it is.
func canonPrefix(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !rawOK[c] || c == '%' && escapeChanges(s, i) {
			return i
		}
	}
	return len(s)
}

// canonChanges reports whether canon(s) differs from s.
func canonChanges(s string) bool { return canonPrefix(s) < len(s) }

// escapeChanges reports whether canon rewrites the "%" at s[i].
func escapeChanges(s string, i int) bool {
	hi, ok1 := unhex(at(s, i+1))
	lo, ok2 := unhex(at(s, i+2))
	if !ok1 || !ok2 {
		return false
	}
	if decodesTo(hi<<4 | lo) {
		return true
	}
	return s[i+1] >= 'a' || s[i+2] >= 'a' // lower-case hex digit
}

func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}
