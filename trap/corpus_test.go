package trap

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A simulated web for crawl tests: a page is its links (absolute URLs) and
// its content fingerprint.
type page struct {
	links []string
	fp    uint64
}

// webFunc answers a URL with its page, or false for a 404.
type webFunc func(url string) (page, bool)

// crawlResult is what a simulated crawl did.
type crawlResult struct {
	fetched  map[string][]string // host → fetched URLs, in order
	rejected map[Rule]int
}

// simulate crawls web breadth-first from seeds the way the assembly uses a
// Detector: every discovered link is judged (with its source and depth)
// before it is queued, every fetched page's fingerprint is reported through
// ObservePage with its links, and the links of a page that ObservePage
// rejects are dropped.
func simulate(t *testing.T, d *Detector, web webFunc, seeds []string, maxFetches int) crawlResult {
	t.Helper()
	return simulateFunc(t, d, web, seeds, maxFetches, func(u string, p page) Verdict {
		return d.ObservePage(Page{URL: u, Fingerprint: p.fp, Links: p.links})
	})
}

// simulateFunc is simulate with the content report made by observe.
func simulateFunc(t *testing.T, d *Detector, web webFunc, seeds []string, maxFetches int, observe func(string, page) Verdict) crawlResult {
	t.Helper()
	type item struct {
		url   string
		depth int
	}
	res := crawlResult{fetched: map[string][]string{}, rejected: map[Rule]int{}}
	seen := map[string]bool{}
	var queue []item
	for _, s := range seeds {
		seen[s] = true
		queue = append(queue, item{s, 0})
	}
	fetches := 0
	for len(queue) > 0 && fetches < maxFetches {
		it := queue[0]
		queue = queue[1:]
		p, ok := web(it.url)
		if !ok {
			continue
		}
		fetches++
		host := hostOf(it.url)
		res.fetched[host] = append(res.fetched[host], it.url)
		if v := observe(it.url, p); v.Rejected() {
			res.rejected[v.Rule]++
			continue
		}
		for _, l := range p.links {
			if seen[l] {
				continue
			}
			v := d.JudgeAt(now, Candidate{URL: l, Source: it.url, Depth: it.depth + 1})
			if v.Rejected() {
				res.rejected[v.Rule]++
				continue
			}
			seen[l] = true
			queue = append(queue, item{l, it.depth + 1})
		}
	}
	if fetches >= maxFetches {
		t.Errorf("crawl did not finish within %d fetches", maxFetches)
	}
	return res
}

func hostOf(u string) string {
	rest := u[strings.Index(u, "://")+3:]
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

func pathOf(u string) string {
	rest := u[strings.Index(u, "://")+3:]
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		return rest[i:]
	}
	return "/"
}

// fpOf gives distinct pages distinct, well-spread fingerprints.
func fpOf(s string) uint64 { return mix(hashString(offset64, s)) }

// trapWeb builds the trap corpus: one host (or one domain, for the
// subdomain farms) per trap, each with a home page linking into its trap.
func trapWeb() (webFunc, []string, map[string]string) {
	r := rand.New(rand.NewPCG(7, 11))
	token := func(n int, alphabet string) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	const hexDigits = "0123456789abcdef"
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	const soft404 = 0x5eed0404deadbeef
	kinds := map[string]string{ // host or domain → trap kind
		"calendar.example":  "calendar (path)",
		"daycal.example":    "calendar (?date=)",
		"monthcal.example":  "calendar (?month=&year=)",
		"loop.example":      "repeating segments (a/, b/)",
		"nest.example":      "repeating segments (nested relative link)",
		"session.example":   "session id (PHPSESSID)",
		"jsession.example":  "session id (;jsessionid)",
		"token.example":     "session id (unnamed token)",
		"timestamp.example": "growing parameter (timestamp)",
		"random.example":    "growing parameter (random value)",
		"search.example":    "growing parameter (refinements)",
		"farm.example":      "subdomain farm (u{n})",
		"hexfarm.example":   "subdomain farm ({id})",
		"soft404.example":   "soft-404 maze (identical content)",
		"echo404.example":   "soft-404 (echoes the URL, same links)",
		"mirror.example":    "content repetition (whole host)",
		"counter.example":   "content repetition (endless pagination)",
	}
	home := func(host string, links ...string) page {
		for i := range links {
			links[i] = "http://" + host + links[i]
		}
		return page{links: links, fp: fpOf(host)}
	}
	web := func(u string) (page, bool) {
		host, path := hostOf(u), pathOf(u)
		if path == "/" {
			switch host {
			case "calendar.example":
				return home(host, "/calendar/2025/11/"), true
			case "daycal.example":
				return home(host, "/events?date=2025-11-21"), true
			case "monthcal.example":
				return home(host, "/cal?month=11&year=2025"), true
			case "loop.example":
				return home(host, "/loop/"), true
			case "nest.example":
				return home(host, "/docs/guide/"), true
			case "session.example":
				return home(host, "/shop/?PHPSESSID="+token(26, "0123456789abcdefghijklmnopqrstuv")), true
			case "jsession.example":
				return home(host, "/shop/;jsessionid="+token(32, "0123456789ABCDEF")), true
			case "token.example":
				return home(host, "/cart?token="+token(32, hexDigits)), true
			case "timestamp.example":
				return home(host, "/feed?ts=1763726400"), true
			case "random.example":
				return home(host, "/page?r="+token(8, alnum)), true
			case "search.example":
				return home(host, "/search?q=lamp"), true
			case "farm.example":
				return page{links: []string{"http://u1.farm.example/"}, fp: fpOf(u)}, true
			case "hexfarm.example":
				return page{links: []string{"http://" + token(8, hexDigits) + ".hexfarm.example/"}, fp: fpOf(u)}, true
			case "soft404.example":
				return home(host, "/missing/"+token(6, "abcdefghij")), true
			case "echo404.example":
				return home(host, "/page/1"), true
			case "mirror.example":
				return home(host, "/"+token(5, "abcdefghij")), true
			case "counter.example":
				return home(host, "/list?page=1"), true
			}
			if strings.HasSuffix(host, ".farm.example") {
				n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(host, "u"), ".farm.example"))
				return page{links: []string{
					fmt.Sprintf("http://u%d.farm.example/", 2*n),
					fmt.Sprintf("http://u%d.farm.example/", 2*n+1),
				}, fp: fpOf(u)}, true
			}
			if strings.HasSuffix(host, ".hexfarm.example") {
				return page{links: []string{
					"http://" + token(8, hexDigits) + ".hexfarm.example/",
					"http://" + token(8, hexDigits) + ".hexfarm.example/",
				}, fp: fpOf(u)}, true
			}
		}
		base := "http://" + host
		switch host {
		case "calendar.example":
			var y, m int
			if _, err := fmt.Sscanf(path, "/calendar/%d/%d/", &y, &m); err != nil {
				return page{}, false
			}
			py, pm, ny, nm := y, m-1, y, m+1
			if pm == 0 {
				py, pm = y-1, 12
			}
			if nm == 13 {
				ny, nm = y+1, 1
			}
			return page{links: []string{
				fmt.Sprintf("%s/calendar/%d/%02d/", base, py, pm),
				fmt.Sprintf("%s/calendar/%d/%02d/", base, ny, nm),
			}, fp: fpOf(u)}, true
		case "daycal.example":
			day, err := timeParse(strings.TrimPrefix(path, "/events?date="))
			if err != nil {
				return page{}, false
			}
			return page{links: []string{
				base + "/events?date=" + day.AddDate(0, 0, -1).Format("2006-01-02"),
				base + "/events?date=" + day.AddDate(0, 0, 1).Format("2006-01-02"),
			}, fp: fpOf(u)}, true
		case "monthcal.example":
			var m, y int
			if _, err := fmt.Sscanf(path, "/cal?month=%d&year=%d", &m, &y); err != nil {
				return page{}, false
			}
			py, pm, ny, nm := y, m-1, y, m+1
			if pm == 0 {
				py, pm = y-1, 12
			}
			if nm == 13 {
				ny, nm = y+1, 1
			}
			return page{links: []string{
				fmt.Sprintf("%s/cal?month=%d&year=%d", base, pm, py),
				fmt.Sprintf("%s/cal?month=%d&year=%d", base, nm, ny),
			}, fp: fpOf(u)}, true
		case "loop.example":
			return page{links: []string{u + "a/", u + "b/"}, fp: fpOf(u)}, true
		case "nest.example":
			dir := u[:strings.LastIndexByte(u, '/')+1]
			return page{links: []string{dir + "docs/guide/", dir + "intro"}, fp: fpOf(u)}, true
		case "session.example":
			var links []string
			for _, p := range []string{"/shop/", "/shop/cart", "/shop/help"} {
				links = append(links, base+p+"?PHPSESSID="+token(26, "0123456789abcdefghijklmnopqrstuv"))
			}
			return page{links: links, fp: fpOf(path[:strings.IndexByte(path, '?')])}, true
		case "jsession.example":
			var links []string
			for _, p := range []string{"/shop/", "/shop/cart", "/shop/help"} {
				links = append(links, base+p+";jsessionid="+token(32, "0123456789ABCDEF"))
			}
			return page{links: links, fp: fpOf(u)}, true
		case "token.example":
			return page{links: []string{base + "/cart?token=" + token(32, hexDigits)}, fp: fpOf(u)}, true
		case "timestamp.example":
			ts, _ := strconv.Atoi(strings.TrimPrefix(path, "/feed?ts="))
			return page{links: []string{
				base + "/feed?ts=" + strconv.Itoa(ts+1),
				base + "/feed?ts=" + strconv.Itoa(ts+7),
			}, fp: fpOf(u)}, true
		case "random.example":
			return page{links: []string{base + "/page?r=" + token(8, alnum), base + "/page?r=" + token(8, alnum)}, fp: fpOf(u)}, true
		case "search.example":
			return page{links: []string{u + "+" + token(5, "abcdefghij"), u + "+" + token(5, "klmnopqrst")}, fp: fpOf(u)}, true
		case "soft404.example":
			// A maze: the same "not found" text, with links to
			// suggestions that are new URLs every time.
			return page{links: []string{
				base + "/missing/" + token(6, "abcdefghij"),
				base + "/missing/" + token(6, "abcdefghij"),
			}, fp: soft404}, true
		case "echo404.example":
			if n, err := strconv.Atoi(strings.TrimPrefix(path, "/page/")); err == nil {
				// A chain of real pages, each with a broken link.
				return page{links: []string{
					fmt.Sprintf("%s/page/%d", base, n+1),
					base + "/missing/" + token(6, "abcdefghij"),
				}, fp: fpOf(u)}, n < 40
			}
			// Not found pages that echo the URL, so their text
			// differs in a bit or two, but share the template's links
			// (relative ones resolve into the page's directory).
			dir := u[:strings.LastIndexByte(u, '/')+1]
			return page{links: []string{base + "/", dir + "help", base + "/missing/?lang=de"},
				fp: soft404 ^ 1<<uint(r.IntN(3))}, true
		case "mirror.example":
			return page{links: []string{
				base + "/" + token(4, "abcdefghij") + "/" + token(5, "abcdefghij"),
				base + "/" + token(3, "abcdefghij") + "?" + token(3, "klmnop") + "=1",
			}, fp: soft404}, true
		case "counter.example":
			n, _ := strconv.Atoi(strings.TrimPrefix(path, "/list?page="))
			fp := fpOf(u)
			if n > 3 {
				fp = soft404 // past the last page: "no results"
			}
			return page{links: []string{fmt.Sprintf("%s/list?page=%d", base, n+1)}, fp: fp}, true
		}
		return page{}, false
	}
	var seeds []string
	for h := range kinds {
		seeds = append(seeds, "http://"+h+"/")
	}
	sort.Strings(seeds)
	return web, seeds, kinds
}

// TestTrapCorpora crawls one host (or farm domain) per trap kind and checks
// that each trap is stopped within 10 fetches inside it.
func TestTrapCorpora(t *testing.T) {
	web, seeds, kinds := trapWeb()
	d := New(Config{})
	res := simulate(t, d, web, seeds, 100_000)
	perTrap := map[string]int{}
	maxPerHost := map[string]int{}
	for host, urls := range res.fetched {
		key := host
		if i := strings.Index(host, "."); i >= 0 && kinds[host] == "" {
			key = host[i+1:] // a minted host counts for its farm
		}
		n := 0
		for _, u := range urls {
			if u != "http://"+key+"/" && !strings.HasPrefix(pathOf(u), "/page/") {
				n++ // echo404.example's /page/ are its real pages
			}
		}
		perTrap[key] += n
		maxPerHost[key] = max(maxPerHost[key], n)
	}
	var keys []string
	for k := range kinds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%-45s %2d fetches in the trap (at most %d on one host)", kinds[k], perTrap[k], maxPerHost[k])
		if perTrap[k] > 10 {
			t.Errorf("%s (%s): %d fetches inside the trap, want at most 10", kinds[k], k, perTrap[k])
		}
	}
	t.Logf("rejections by rule: %v", res.rejected)
	real := 0
	for _, u := range res.fetched["echo404.example"] {
		if strings.HasPrefix(pathOf(u), "/page/") {
			real++
		}
	}
	if real != 39 {
		t.Errorf("echo404.example: fetched %d of its 39 real pages: the soft 404 stopped the host", real)
	}
}

func timeParse(s string) (time.Time, error) { return time.Parse("2006-01-02", s) }
