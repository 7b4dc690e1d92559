package robots

import "strings"

// Estimates of the heap octets a cached Policy retains, for the Cache's
// byte bound (Config.MaxCacheBytes). They were calibrated with
// runtime.ReadMemStats on files of short rules, long rules, wildcard rules
// and many groups (TestPolicyMemSize): the estimate is at least what was
// measured and at most about a quarter more, except for wildcard rules
// that share one literal prefix (they share a tree node, which is counted
// for each), for which it is up to twice as much. They count the slack left by
// append growth and one matcher compiled over every rule of the file,
// which is what a crawler asking with one product token can compile at
// most.
const (
	// memPolicy is a Policy with its AgentRules for "no group" and its
	// empty agents map.
	memPolicy = 1024
	// memRule is one rule: its Rule in Policy.rules, its index in its
	// group, its compiled rule, and the radix tree nodes it adds (a leaf
	// and at most one split node, with their child lists).
	memRule = 280
	// memWild is the extra cost of a rule with a wildcard: its segment
	// list, bigrams and place in its node's wildcard lists.
	memWild = 64
	// memGroup is a group; memAgent an agent of the file (its AgentRules,
	// map entry and group list); memDelay a Crawl-delay run.
	memGroup = 64
	memAgent = 224
	memDelay = 64
	// memString is a string header (sitemaps, agents of a delay run).
	memString = 16
	// entryOverhead is a Cache entry, its list element and map slot.
	entryOverhead = 256
)

// memSize estimates the heap octets p retains, its source body included.
func (p *Policy) memSize() int64 {
	// A large body's allocation is rounded up to whole 8 KiB pages.
	n := int64(memPolicy + (len(p.src)+8191)&^8191)
	for i := range p.rules {
		pat := p.rules[i].Pattern
		n += memRule
		if strings.IndexByte(pat, '*') >= 0 {
			n += memWild + int64(memString*strings.Count(pat, "*"))
		}
		if pat[0] != '/' && pat[0] != '*' || canonChanges(pat) {
			// The compiled prefix and segments are copies, not
			// substrings of the source.
			n += int64(len(pat)) + 2*memString
		}
	}
	n += int64(memGroup * len(p.groups))
	for i := range p.groups {
		for _, d := range p.groups[i].delays {
			n += int64(memDelay + memString*len(d.agents))
		}
	}
	for a := range p.agents {
		n += int64(memAgent + len(a)) // a lower-cased token may be a copy
	}
	if p.star != nil {
		n += memAgent
	}
	n += int64(memString * len(p.sitemaps))
	return n
}
