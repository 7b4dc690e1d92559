package crawltest_test

import (
	"bufio"
	"crypto/sha256"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/crawlkit/crawlkit/crawltest"
)

// The tests in this file check the generator's ground truth against a
// plain breadth-first crawl of what the server actually serves, with a
// link folder and a robots.txt evaluator written independently of the
// package (net/url resolution, regexp matching).

// fakeClock is a manually advanced clock for Config.Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// testRobots is a tiny RFC 9309 evaluator for the test crawler.
type testRobots struct {
	status int
	groups []testGroup
}

type testGroup struct {
	agents []string
	rules  []testRule
	delay  time.Duration
}

type testRule struct {
	allow bool
	re    *regexp.Regexp
	n     int
}

func parseTestRobots(status int, body string) *testRobots {
	r := &testRobots{status: status}
	if status != http.StatusOK {
		return r
	}
	var cur *testGroup
	inAgents := false
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key, val = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(val)
		switch key {
		case "user-agent":
			if !inAgents {
				r.groups = append(r.groups, testGroup{})
				cur = &r.groups[len(r.groups)-1]
			}
			cur.agents = append(cur.agents, strings.ToLower(val))
			inAgents = true
		case "allow", "disallow":
			inAgents = false
			if cur == nil || val == "" {
				continue
			}
			expr := regexp.QuoteMeta(val)
			expr = strings.ReplaceAll(expr, `\*`, ".*")
			if strings.HasSuffix(expr, `\$`) {
				expr = strings.TrimSuffix(expr, `\$`) + "$"
			}
			cur.rules = append(cur.rules, testRule{key == "allow", regexp.MustCompile("^" + expr), len(val)})
		case "crawl-delay":
			inAgents = false
			if f, err := strconv.ParseFloat(val, 64); err == nil && cur != nil {
				cur.delay = time.Duration(f * float64(time.Second))
			}
		}
	}
	return r
}

func (r *testRobots) group(agent string) *testGroup {
	var star *testGroup
	for i := range r.groups {
		for _, a := range r.groups[i].agents {
			if a == strings.ToLower(agent) {
				return &r.groups[i]
			}
			if a == "*" {
				star = &r.groups[i]
			}
		}
	}
	return star
}

func (r *testRobots) allowed(agent, pathQuery string) bool {
	switch {
	case r.status >= 500:
		return false
	case r.status >= 400:
		return true
	}
	g := r.group(agent)
	if g == nil {
		return true
	}
	best, allow := -1, true
	for _, rule := range g.rules {
		if rule.re.MatchString(pathQuery) && (rule.n > best || rule.n == best && rule.allow) {
			best, allow = rule.n, rule.allow
		}
	}
	return allow
}

// fold resolves href against base and folds it the way a crawler should,
// with net/url: lower-case host, no default port, no fragment, canonical
// path escaping, no tracking or empty parameters, sorted parameters.
func fold(base *url.URL, href string) (string, bool) {
	ref, err := url.Parse(href)
	if err != nil {
		return "", false
	}
	u := base.ResolveReference(ref)
	if u.Scheme != "http" {
		return "", false
	}
	u.Host = strings.ToLower(strings.TrimSuffix(u.Host, ":80"))
	u.Fragment, u.RawFragment = "", ""
	u.RawPath = ""
	var params []string
	for _, p := range strings.Split(u.RawQuery, "&") {
		if p != "" && !strings.HasPrefix(p, "utm_") {
			params = append(params, p)
		}
	}
	slices.Sort(params)
	u.RawQuery, u.ForceQuery = strings.Join(params, "&"), false
	return u.String(), true
}

func hrefs(body []byte) []string {
	var out []string
	z := html.NewTokenizer(strings.NewReader(string(body)))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return out
		case html.StartTagToken:
			name, hasAttr := z.TagName()
			if string(name) != "a" {
				continue
			}
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				if string(k) == "href" {
					out = append(out, string(v))
				}
			}
		}
	}
}

// crawled is what the test crawler learned about one URL.
type crawled struct {
	depth  int
	status int
	sum    [32]byte
	body   []byte
	links  []string // folded
}

// testCrawl is a plain BFS crawler over the web.
type testCrawl struct {
	agent    string
	obey     bool // honour robots.txt
	maxDepth int  // 0: none
	clock    *fakeClock
	step     time.Duration // clock advance after each request

	robots  map[string]*testRobots
	pages   map[string]*crawled
	blocked map[string]bool
	raw     []string // every href seen
}

func (c *testCrawl) get(t *testing.T, client *http.Client, u string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", c.agent+"/1.0 (+http://example.test/bot)")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	if c.clock != nil {
		c.clock.Advance(c.step)
	}
	return resp.StatusCode, body
}

func (c *testCrawl) run(t *testing.T, web *crawltest.Web) {
	t.Helper()
	client := web.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.robots = make(map[string]*testRobots)
	c.pages = make(map[string]*crawled)
	c.blocked = make(map[string]bool)
	type item struct {
		url   string
		depth int
	}
	var queue []item
	seen := make(map[string]bool)
	for _, s := range web.Seeds() {
		seen[s] = true
		queue = append(queue, item{s, 0})
	}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		u, err := url.Parse(it.url)
		if err != nil {
			t.Fatal(err)
		}
		rb := c.robots[u.Host]
		if rb == nil {
			status, body := c.get(t, client, "http://"+u.Host+"/robots.txt")
			rb = parseTestRobots(status, string(body))
			c.robots[u.Host] = rb
		}
		if !rb.allowed(c.agent, u.RequestURI()) {
			c.blocked[it.url] = true
			if c.obey {
				continue
			}
		}
		status, body := c.get(t, client, it.url)
		p := &crawled{depth: it.depth, status: status, sum: sha256.Sum256(body), body: body}
		c.pages[it.url] = p
		if status != http.StatusOK || c.obey && !rb.allowed(c.agent, u.RequestURI()) {
			continue
		}
		for _, h := range hrefs(body) {
			c.raw = append(c.raw, h)
			f, ok := fold(u, h)
			if !ok {
				continue
			}
			p.links = append(p.links, f)
			if !seen[f] && (c.maxDepth == 0 || it.depth < c.maxDepth) {
				seen[f] = true
				queue = append(queue, item{f, it.depth + 1})
			}
		}
	}
}

func TestTruthMatchesCrawl(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      crawltest.Config
		agent    string
		maxDepth int
	}{
		{"no-traps-unbounded", crawltest.Config{Hosts: 12, PagesPerHost: 40, LinksPerPage: 8, Seed: 7, NoTraps: true}, "crawlkit", 0},
		{"traps-depth-4", crawltest.Config{Hosts: 12, PagesPerHost: 30, LinksPerPage: 6, Seed: 3}, "crawlkit", 4},
		{"other-agent", crawltest.Config{Hosts: 6, PagesPerHost: 25, Seed: 11, NoTraps: true}, "otherbot", 0},
		{"unknown-agent-depth-2", crawltest.Config{Hosts: 8, PagesPerHost: 25, Seed: 5}, "somebot", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			web, err := crawltest.NewWeb(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer web.Close()
			truth := web.TruthFor(tc.agent, tc.maxDepth)
			c := &testCrawl{agent: tc.agent, obey: true, maxDepth: tc.maxDepth}
			c.run(t, web)

			var got, broken, trapEntries []string
			for u, p := range c.pages {
				switch {
				case truth.IsTrap(u):
					if p.status != http.StatusOK {
						t.Errorf("trap page %s answered %d", u, p.status)
					}
				case p.status == http.StatusOK:
					got = append(got, u)
					if len(p.body) < 10<<10 || len(p.body) > 30<<10 {
						t.Errorf("%s: %d bytes, want 10–30 KB", u, len(p.body))
					}
				case p.status == http.StatusNotFound:
					broken = append(broken, u)
				default:
					t.Errorf("%s answered %d", u, p.status)
				}
				if !truth.IsTrap(u) {
					for _, l := range p.links {
						if truth.IsTrap(l) {
							trapEntries = append(trapEntries, l)
						}
					}
				}
			}
			slices.Sort(got)
			slices.Sort(broken)
			slices.Sort(trapEntries)
			trapEntries = slices.Compact(trapEntries)
			if want := truth.URLs(); !slices.Equal(got, want) {
				t.Errorf("crawl found %d pages, truth has %d\ncrawl-only: %v\ntruth-only: %v",
					len(got), len(want), minus(got, want), minus(want, got))
			}
			blocked := make([]string, 0, len(c.blocked))
			for u := range c.blocked {
				blocked = append(blocked, u)
			}
			slices.Sort(blocked)
			if !slices.Equal(blocked, truth.Blocked) {
				t.Errorf("blocked: crawl-only %v, truth-only %v", minus(blocked, truth.Blocked), minus(truth.Blocked, blocked))
			}
			if !slices.Equal(broken, truth.Broken) {
				t.Errorf("broken: crawl %v, truth %v", broken, truth.Broken)
			}
			if !slices.Equal(trapEntries, truth.TrapEntries) {
				t.Errorf("trap entries: crawl %v, truth %v", trapEntries, truth.TrapEntries)
			}
			if len(blocked) == 0 || len(truth.Pages) < tc.cfg.Hosts {
				t.Errorf("degenerate web: %d pages, %d blocked", len(truth.Pages), len(blocked))
			}

			// Depths and exact duplicates.
			bySum := make(map[[32]byte][]string)
			for _, u := range got {
				bySum[c.pages[u].sum] = append(bySum[c.pages[u].sum], u)
			}
			dups := 0
			for _, u := range got {
				p, ok := truth.Lookup(u)
				if !ok {
					continue
				}
				if p.Depth != c.pages[u].depth {
					t.Errorf("%s: truth depth %d, crawl depth %d", u, p.Depth, c.pages[u].depth)
				}
				same := bySum[c.pages[u].sum]
				if p.DuplicateOf == "" {
					for _, o := range same {
						if o != u && truth.Pages[o].DuplicateOf != u {
							t.Errorf("%s is an original, %s has the same bytes but is not marked its duplicate", u, o)
						}
					}
					continue
				}
				dups++
				if c.pages[p.DuplicateOf] == nil || c.pages[p.DuplicateOf].sum != c.pages[u].sum {
					t.Errorf("%s: DuplicateOf %s, but the bytes differ", u, p.DuplicateOf)
				}
			}
			if tc.maxDepth != 2 && dups == 0 {
				t.Error("no exact duplicates in the web")
			}
			if unique := truth.Unique(); len(unique) != len(bySum) {
				t.Errorf("Unique has %d pages, the crawl saw %d distinct bodies", len(unique), len(bySum))
			}
			if m := truth.Missing(got); len(m) != 0 {
				t.Errorf("Missing after a complete crawl: %v", m)
			}

			// Near-duplicate clusters are near, other pages are not.
			clusters := truth.Clusters()
			t.Logf("%d pages (%d unique), %d blocked, %d broken, %d trap entries, %d duplicates, %d clusters, %d trap pages crawled",
				len(truth.Pages), len(truth.Unique()), len(truth.Blocked), len(truth.Broken), len(truth.TrapEntries), dups, len(clusters), len(c.pages)-len(got)-len(broken))
			if tc.maxDepth == 0 && len(clusters) == 0 {
				t.Error("no near-duplicate clusters")
			}
			for _, cl := range clusters {
				for _, u := range cl[1:] {
					if s := similarity(c.pages[cl[0]].body, c.pages[u].body); s < 0.95 {
						t.Errorf("cluster %s / %s: similarity %.3f", cl[0], u, s)
					}
				}
			}
			for i := 1; i+1 < len(got); i += 7 {
				a, b := truth.Pages[got[i]], truth.Pages[got[i+1]]
				if a.Cluster != "" && a.Cluster == b.Cluster || a.DuplicateOf != "" || b.DuplicateOf != "" {
					continue
				}
				if s := similarity(c.pages[got[i]].body, c.pages[got[i+1]].body); s > 0.5 {
					t.Errorf("unrelated pages %s and %s: similarity %.3f", got[i], got[i+1], s)
				}
			}
		})
	}
}

// similarity is the Jaccard similarity of two documents' 3-word shingles.
func similarity(a, b []byte) float64 {
	sa, sb := shingles(a), shingles(b)
	inter := 0
	for s := range sa {
		if sb[s] {
			inter++
		}
	}
	return float64(inter) / float64(len(sa)+len(sb)-inter)
}

func shingles(doc []byte) map[string]bool {
	f := strings.Fields(string(doc))
	m := make(map[string]bool)
	for i := 0; i+3 <= len(f); i++ {
		m[strings.Join(f[i:i+3], " ")] = true
	}
	return m
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	if len(out) > 10 {
		out = append(out[:10], "…")
	}
	return out
}
