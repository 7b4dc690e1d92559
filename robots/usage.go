package robots

import (
	"strings"
)

// This file reads two extension lines that say how content may be used
// rather than whether it may be crawled: the Content-Usage rule of
// draft-ietf-aipref-attach §3 and Cloudflare's Content-Signal line. They
// leave RFC 9309 matching untouched: they belong to the groups the
// Allow and Disallow rules define (so, unlike the draft's rule, a
// Content-Usage line does not end a run of User-agent lines), and lines
// before the first group are ignored as rules there are (RFC 9309 §2.1).
// Their preference values are kept as written; package usage reads them.

// maxExtLines bounds the extension lines kept from one file, so that the
// per-URL lookup, linear in them, stays cheap on a hostile file.
const maxExtLines = 4096

// ContentUsage is a Content-Usage rule (draft-ietf-aipref-attach §3).
type ContentUsage struct {
	// Path is the rule's path pattern, with the "*" and "$" of Allow and
	// Disallow; empty when absent, in which case the rule applies to every
	// path.
	Path string
	// Preference is the statement of preference as written: an RFC 9651
	// Dictionary such as "train-ai=n" (draft-ietf-aipref-vocab §6).
	Preference string
	// Line is the 1-based line number in the file.
	Line int
}

// ContentSignal is a Content-Signal line of Cloudflare's Content Signals
// Policy ("Content-Signal: search=yes, ai-train=no").
type ContentSignal struct {
	// Value is the line's value as written.
	Value string
	// Line is the 1-based line number in the file.
	Line int
}

// extLines are a file's extension lines and the group of each.
type extLines struct {
	usage       []ContentUsage
	usageGroup  []int
	signals     []ContentSignal
	signalGroup []int
}

// extension handles a line the RFC 9309 parser does not know.
func (b *builder) extension(key, value string, lineNo int) {
	e := &b.p.ext
	if !b.inGroup || value == "" || len(e.usage)+len(e.signals) >= maxExtLines {
		return
	}
	switch {
	case strings.EqualFold(key, "content-usage"):
		// attach §3.2: a value starting with "/" has a path, which ends at
		// the first SP or HTAB; any other value is all preference.
		cu := ContentUsage{Preference: value, Line: lineNo}
		if value[0] == '/' {
			if i := strings.IndexAny(value, " \t"); i >= 0 {
				cu.Path, cu.Preference = value[:i], trimWS(value[i:])
			} else {
				cu.Path, cu.Preference = value, ""
			}
		}
		e.usage = append(e.usage, cu)
		e.usageGroup = append(e.usageGroup, b.cur)
	case strings.EqualFold(key, "content-signal"):
		e.signals = append(e.signals, ContentSignal{Value: value, Line: lineNo})
		e.signalGroup = append(e.signalGroup, b.cur)
	}
}

// ContentUsage returns the Content-Usage rules that apply to target (an
// absolute URL or a path with optional query) for these rules' agent:
// those of its groups whose path matches target with the longest
// pattern, measured as Allow and Disallow rules are (attach §3.1). Several
// equally long ones are all returned; their preferences combine (vocab
// §7.1). A rule without a path matches every path with length zero. A
// target robots.txt does not allow has no preferences (attach §3.1): nil.
func (a *AgentRules) ContentUsage(target string) []ContentUsage {
	e := &a.policy.ext
	if len(e.usage) == 0 || a.groups == nil || !a.Allowed(target).Allowed {
		return nil
	}
	path := pathOf(target)
	var out []ContentUsage
	best := -1
	for i, cu := range e.usage {
		if !inGroups(a.groups, e.usageGroup[i]) {
			continue
		}
		spec := 0
		if cu.Path != "" {
			if !MatchPattern(cu.Path, path) {
				continue
			}
			spec = specificity(cu.Path)
		}
		switch {
		case spec > best:
			best, out = spec, append(out[:0], cu)
		case spec == best:
			out = append(out, cu)
		}
	}
	return out
}

// ContentSignals returns the Content-Signal lines of the groups that apply
// to these rules' agent, in file order.
func (a *AgentRules) ContentSignals() []ContentSignal {
	e := &a.policy.ext
	var out []ContentSignal
	for i, s := range e.signals {
		if inGroups(a.groups, e.signalGroup[i]) {
			out = append(out, s)
		}
	}
	return out
}

// ContentUsage is Agent followed by AgentRules.ContentUsage.
func (p *Policy) ContentUsage(token, target string) ([]ContentUsage, error) {
	a, err := p.Agent(token)
	if err != nil {
		return nil, err
	}
	return a.ContentUsage(target), nil
}

// ContentSignals is Agent followed by AgentRules.ContentSignals.
func (p *Policy) ContentSignals(token string) ([]ContentSignal, error) {
	a, err := p.Agent(token)
	if err != nil {
		return nil, err
	}
	return a.ContentSignals(), nil
}

func inGroups(groups []int, g int) bool {
	for _, x := range groups {
		if x == g {
			return true
		}
	}
	return false
}

// MatchPattern reports whether a robots.txt path pattern matches target
// (an absolute URL or a path with optional query) as an Allow or Disallow
// rule with that pattern would (RFC 9309 §2.2.2–2.2.3): a prefix match,
// "*" matching any sequence, a final "$" anchoring the end, and
// percent-encoded unreserved characters equal to their literal form. An
// empty pattern matches nothing. TDMRep §3.1.1 matches its locations so.
func MatchPattern(pattern, target string) bool {
	if pattern == "" {
		return false
	}
	pat := pattern
	if pat[0] != '/' && pat[0] != '*' {
		pat = "/" + pat
	}
	anchored := false
	if strings.HasSuffix(pat, "$") {
		anchored, pat = true, pat[:len(pat)-1]
	}
	if t := strings.TrimRight(pat, "*"); len(t) != len(pat) {
		pat, anchored = t, false
	}
	path := canon(pathOf(target))
	prefix, rest, wild := strings.Cut(pat, "*")
	prefix = canon(prefix)
	if !strings.HasPrefix(path, prefix) {
		return false
	}
	if !wild {
		return !anchored || len(path) == len(prefix)
	}
	var segs []string
	for more := true; more; {
		var s string
		s, rest, more = strings.Cut(rest, "*")
		if s != "" {
			segs = append(segs, canon(s))
		}
	}
	return globMatch(segs, anchored, path[len(prefix):])
}
