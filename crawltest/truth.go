package crawltest

import (
	"slices"
	"strings"
)

// Truth is the ground truth of a web for one crawl agent and depth bound,
// computed from the generator (not by crawling): what a crawler that
// honours robots.txt, starts from Web.Seeds and follows every link to a
// page (but not into spider traps) can reach.
type Truth struct {
	// Agent is the product token whose robots.txt rules were applied.
	Agent string
	// MaxDepth is the depth bound (0: none); seeds are at depth 0.
	MaxDepth int
	// Pages holds every reachable, robots-allowed page by canonical URL,
	// exact duplicates and near-duplicates included, trap pages excluded.
	Pages map[string]Page
	// Blocked lists the canonical URLs of pages that reachable pages link
	// to (or seeds) but that robots.txt disallows, sorted.
	Blocked []string
	// Broken lists the canonical URLs of links from reachable pages that
	// answer 404, sorted.
	Broken []string
	// TrapEntries lists the canonical URLs of links from reachable pages
	// into spider traps, sorted. Every URL inside a trap's region is a
	// trap URL; see IsTrap.
	TrapEntries []string

	gen *generator
}

// Page is what the truth knows about one page.
type Page struct {
	URL   string // canonical URL
	Host  string // host name, e.g. "h0003.test"
	Depth int    // length of the shortest link path from a seed
	// DuplicateOf is, for an exact duplicate (the same bytes under
	// another URL), the canonical URL of the original page: the primary
	// URL where it is reachable. It is empty for originals.
	DuplicateOf string
	// Cluster names the near-duplicate cluster the page belongs to (the
	// canonical URL of the cluster's first page), or is empty. Pages of
	// one cluster have the same text but for a date line and an edition
	// number.
	Cluster string

	host, n int // content group: every variant of page n of host
}

// Truth returns the ground truth for Config.Agent and Config.MaxDepth.
func (w *Web) Truth() *Truth { return w.TruthFor(w.cfg.Agent, w.cfg.MaxDepth) }

// TruthFor returns the ground truth for a crawler with the given robots.txt
// product token that follows links up to maxDepth hops from the seeds (0
// or less: no bound). It generates the link graph of every reachable page,
// so it costs time proportional to the size of the web (0.5–2 s per
// 100 000 pages on a 2-core machine).
func (w *Web) TruthFor(agent string, maxDepth int) *Truth {
	g := w.gen
	if maxDepth < 0 {
		maxDepth = 0
	}
	t := &Truth{Agent: agent, MaxDepth: maxDepth, Pages: make(map[string]Page), gen: g}
	type item struct {
		h     int
		nd    node
		depth int
	}
	key := func(h int, nd node) int64 {
		return (int64(h)*int64(g.pages)+int64(nd.n))*3 + int64(nd.variant)
	}
	seen := make(map[int64]bool)
	queue := make([]item, 0, g.hosts)
	for h := 0; h < g.hosts; h++ {
		nd := node{0, variantPrimary}
		seen[key(h, nd)] = true
		queue = append(queue, item{h, nd, 0})
	}
	blocked := make(map[string]bool)
	broken := make(map[string]bool)
	traps := make(map[string]bool)
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		target := g.target(it.h, it.nd)
		url := "http://" + HostName(it.h) + target
		if !g.allowed(it.h, agent, target) {
			blocked[url] = true
			continue
		}
		t.Pages[url] = Page{URL: url, Host: HostName(it.h), Depth: it.depth, host: it.h, n: it.nd.n}
		if maxDepth > 0 && it.depth >= maxDepth {
			continue
		}
		for _, l := range g.pageLinks(it.h, it.nd.n, false) {
			switch l.kind {
			case linkPage:
				if k := key(l.host, l.nd); !seen[k] {
					seen[k] = true
					queue = append(queue, item{l.host, l.nd, it.depth + 1})
				}
			case linkTrap:
				traps["http://"+HostName(l.host)+l.target] = true
			case linkBroken:
				broken["http://"+HostName(l.host)+l.target] = true
			}
		}
	}
	t.Blocked = sortedKeys(blocked)
	t.Broken = sortedKeys(broken)
	t.TrapEntries = sortedKeys(traps)

	// Exact duplicates: every variant of a page has the same bytes.
	groups := make(map[[2]int][]string)
	for url, p := range t.Pages {
		k := [2]int{p.host, p.n}
		groups[k] = append(groups[k], url)
	}
	for k, urls := range groups {
		orig := g.pageURL(k[0], node{k[1], variantPrimary})
		if _, ok := t.Pages[orig]; !ok {
			orig = slices.Min(urls)
		}
		for _, u := range urls {
			p := t.Pages[u]
			if u != orig {
				p.DuplicateOf = orig
			}
			if g.inCluster(p.n) {
				p.Cluster = g.pageURL(p.host, node{clusterBase(p.n), variantPrimary})
			}
			t.Pages[u] = p
		}
	}
	return t
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// URLs returns the canonical URLs of all pages, sorted.
func (t *Truth) URLs() []string {
	urls := make([]string, 0, len(t.Pages))
	for u := range t.Pages {
		urls = append(urls, u)
	}
	slices.Sort(urls)
	return urls
}

// Unique returns the canonical URLs of the pages that are not exact
// duplicates of another page, sorted: what a crawler with exact content
// deduplication keeps. Near-duplicates are distinct pages and are included.
func (t *Truth) Unique() []string {
	var urls []string
	for u, p := range t.Pages {
		if p.DuplicateOf == "" {
			urls = append(urls, u)
		}
	}
	slices.Sort(urls)
	return urls
}

// Clusters returns the near-duplicate clusters with at least two reachable
// members, each sorted, ordered by their first URL.
func (t *Truth) Clusters() [][]string {
	byID := make(map[string][]string)
	for u, p := range t.Pages {
		if p.Cluster != "" && p.DuplicateOf == "" {
			byID[p.Cluster] = append(byID[p.Cluster], u)
		}
	}
	var clusters [][]string
	for _, c := range byID {
		if len(c) >= 2 {
			slices.Sort(c)
			clusters = append(clusters, c)
		}
	}
	slices.SortFunc(clusters, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return clusters
}

// Lookup returns the page that rawURL (in any spelling Canonical folds)
// names, if it is a page of the truth.
func (t *Truth) Lookup(rawURL string) (Page, bool) {
	c, err := Canonical(rawURL)
	if err != nil {
		return Page{}, false
	}
	p, ok := t.Pages[c]
	return p, ok
}

// IsTrap reports whether rawURL lies inside a spider trap of the web.
func (t *Truth) IsTrap(rawURL string) bool {
	c, err := Canonical(rawURL)
	if err != nil {
		return false
	}
	rest := c[strings.Index(c, "://")+3:]
	slash := strings.IndexByte(rest, '/')
	h, ok := t.gen.hostIndex(rest[:slash])
	if !ok {
		return false
	}
	k := t.gen.trap(h)
	return k != NoTrap && inTrap(k, rest[slash:])
}

// Missing compares a crawl with the truth: given the URLs a crawler fetched
// (in any spelling), it returns the unique pages (see Unique) whose content
// the crawl did not fetch under any of its URLs, sorted.
func (t *Truth) Missing(fetched []string) []string {
	got := make(map[[2]int]bool)
	for _, u := range fetched {
		if p, ok := t.Lookup(u); ok {
			got[[2]int{p.host, p.n}] = true
		}
	}
	var missing []string
	for u, p := range t.Pages {
		if p.DuplicateOf == "" && !got[[2]int{p.host, p.n}] {
			missing = append(missing, u)
		}
	}
	slices.Sort(missing)
	return missing
}
