package crawlkit_test

// Regression tests for "The Crawler on the real web": sites that look
// like spider traps to a naive detector (numbered documentation, shops
// built from one template), a page that always fails, a loopback seed
// without AllowPrivate, the sum identities of Stats, and Handlers that
// panic or never return.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
)

// rwRequest is one request a vhostServer saw.
type rwRequest struct {
	host, path string
	at         time.Time
}

// vhostServer is an httptest server that answers for virtual hosts (told
// apart by the Host header, reached through dial) and logs every request,
// robots.txt included, in the server's clock and order.
type vhostServer struct {
	srv *httptest.Server
	mu  sync.Mutex
	log []rwRequest
}

func newVhostServer(t *testing.T, serve func(w http.ResponseWriter, r *http.Request)) *vhostServer {
	t.Helper()
	s := &vhostServer{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.log = append(s.log, rwRequest{host: hostOf(r), path: r.URL.RequestURI(), at: time.Now()})
		s.mu.Unlock()
		serve(w, r)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// dial routes every virtual host to the server.
func (s *vhostServer) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", s.srv.Listener.Addr().String())
}

// requests returns a copy of the request log.
func (s *vhostServer) requests() []rwRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]rwRequest(nil), s.log...)
}

// counts returns the requests per host+path, robots.txt excluded.
func (s *vhostServer) counts() map[string]int {
	m := map[string]int{}
	for _, r := range s.requests() {
		if r.path != "/robots.txt" {
			m[r.host+r.path]++
		}
	}
	return m
}

// handledLog records every Handler call (a page handed on twice appears
// twice).
type handledLog struct {
	mu    sync.Mutex
	pages []*crawlkit.Page
}

func (l *handledLog) handle(_ context.Context, p *crawlkit.Page) error {
	l.mu.Lock()
	l.pages = append(l.pages, p)
	l.mu.Unlock()
	return nil
}

func (l *handledLog) byURL() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := map[string]int{}
	for _, p := range l.pages {
		m[p.URL]++
	}
	return m
}

// runCrawl runs cfg to its end, bounded by limit, and fails the test if
// Run does not return nil.
func runCrawl(t *testing.T, cfg crawlkit.Config, limit time.Duration) *crawlkit.Crawler {
	t.Helper()
	c, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	if err := c.Run(ctx); err != nil {
		t.Fatalf("Run: %v (stats %+v)", err, c.Stats().URLs)
	}
	return c
}

func writeHTMLPage(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(w, body)
}

// --- 1. Numbered documentation -------------------------------------------

// docSection is one page of a rustdoc-like book.
type docSection struct {
	num, title, path string
}

var docWords = []string{"Ownership", "Borrowing", "Slices", "Structs", "Enums", "Traits",
	"Lifetimes", "Closures", "Iterators", "Modules", "Macros", "Generics", "Errors", "Testing",
	"Threads", "Channels", "Patterns", "Unsafe", "Cargo", "Smart Pointers"}

// docBook returns the sections of a book of chapters × sections ×
// subsections pages, numbered "c.s.u".
func docBook(chapters, sections, subs int) []docSection {
	var out []docSection
	for c := 1; c <= chapters; c++ {
		for s := 1; s <= sections; s++ {
			for u := 0; u <= subs; u++ {
				num := fmt.Sprintf("%d.%d", c, s)
				path := fmt.Sprintf("/book/ch%02d-%02d.html", c, s)
				if u > 0 {
					num = fmt.Sprintf("%d.%d.%d", c, s, u)
					path = fmt.Sprintf("/book/ch%02d-%02d-%02d.html", c, s, u)
				}
				word := docWords[(c*7+s*3+u)%len(docWords)]
				out = append(out, docSection{num: num, title: word, path: path})
			}
		}
	}
	return out
}

// TestNumberedDocsAreNotATrap crawls a 130-page book whose pages are mostly
// section numbers: a sidebar with the whole table of contents, identical on
// every page, a heading "1.2.3 Word", and a table of numbers. Every page is
// a distinct page and must be fetched; nothing is a trap and no host is
// stopped.
func TestNumberedDocsAreNotATrap(t *testing.T) {
	book := docBook(5, 5, 4) // 5×5×5 = 125 sections, + index + 4 appendices
	var sidebar strings.Builder
	sidebar.WriteString(`<nav class="sidebar"><ol class="chapter">`)
	for _, s := range book {
		fmt.Fprintf(&sidebar, `<li><a href="%s"><strong>%s</strong> %s</a></li>`, s.path, s.num, s.title)
	}
	for a := 1; a <= 4; a++ {
		fmt.Fprintf(&sidebar, `<li><a href="/book/appendix-%02d.html"><strong>A.%d</strong></a></li>`, a, a)
	}
	sidebar.WriteString(`</ol></nav>`)
	pages := map[string]string{}
	page := func(title, main string) string {
		return `<!DOCTYPE html><html><head><title>` + title + ` - The Book</title></head><body>` +
			sidebar.String() + `<main>` + main + `</main></body></html>`
	}
	pages["/book/index.html"] = page("Table of Contents", `<h1>Contents</h1>`+sidebar.String())
	for i, s := range book {
		var m strings.Builder
		fmt.Fprintf(&m, `<h1>%s %s</h1><p>See %s.</p><table>`, s.num, s.title, s.num)
		for r := 0; r < 4; r++ {
			fmt.Fprintf(&m, `<tr><td>%s.%d</td><td>%d</td><td>%d</td></tr>`, s.num, r+1, (i+1)*(r+3), (i*31+r*17)%1000)
		}
		m.WriteString(`</table>`)
		pages[s.path] = page(s.num+" "+s.title, m.String())
	}
	for a := 1; a <= 4; a++ {
		// Pages of numbers only.
		var m strings.Builder
		fmt.Fprintf(&m, `<h1>A.%d</h1><pre>`, a)
		for k := 0; k < 40; k++ {
			fmt.Fprintf(&m, "%d.%d %d\n", a, k, (a*97+k*13)%251)
		}
		m.WriteString(`</pre>`)
		pages[fmt.Sprintf("/book/appendix-%02d.html", a)] = page(fmt.Sprintf("A.%d", a), m.String())
	}
	if len(pages) < 127 {
		t.Fatalf("book has %d pages, want 127 or more", len(pages))
	}
	s := newVhostServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
			return
		}
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		writeHTMLPage(w, body)
	})
	var log handledLog
	c := runCrawl(t, crawlkit.Config{
		UserAgent:       testAgent,
		Seeds:           []string{"http://docs.test/book/index.html"},
		Delay:           crawlkit.NoDelay,
		Workers:         4,
		MaxConnsPerHost: 4,
		DialContext:     s.dial,
		AllowPrivate:    loopback,
		Handler:         log.handle,
	}, time.Minute)

	got := s.counts()
	var missing []string
	for p := range pages {
		if got["docs.test"+p] == 0 {
			missing = append(missing, p)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%d of %d pages never requested, e.g. %v", len(missing), len(pages), missing[:min(5, len(missing))])
	}
	st := c.Stats()
	if st.URLs.TrapRejected != 0 {
		t.Errorf("TrapRejected = %d, want 0 (links rejected: %v)", st.URLs.TrapRejected, st.LinksRejected)
	}
	if st.Hosts.Blocked != 0 {
		t.Errorf("Hosts.Blocked = %d, want 0", st.Hosts.Blocked)
	}
	if n := len(log.byURL()); n != len(pages) {
		t.Errorf("%d pages handed to the Handler, want %d", n, len(pages))
	}
	t.Logf("stats: %+v; links rejected %v", st.URLs, st.LinksRejected)
}

// --- 2. Templated shops -------------------------------------------------

var (
	shopAdjectives = []string{"Classic", "Deluxe", "Compact", "Rugged", "Vintage", "Modern", "Silent", "Turbo",
		"Foldable", "Wireless", "Organic", "Heated", "Smart", "Pocket", "Ultra", "Solar"}
	shopNouns = []string{"Kettle", "Backpack", "Lamp", "Blender", "Headphones", "Tent", "Watch", "Chair",
		"Umbrella", "Keyboard", "Teapot", "Jacket", "Drill", "Speaker", "Mug", "Bicycle", "Toaster"}
)

// productName returns a distinct name for product i of shop h.
func productName(h, i int) string {
	return fmt.Sprintf("%s %s %c%d", shopAdjectives[(i*5+h)%len(shopAdjectives)], shopNouns[(i*3+h*7)%len(shopNouns)],
		'A'+rune(h%26), 100+i)
}

func productPrice(h, i int) string {
	return fmt.Sprintf("%d.%02d", 9+(i*37+h*11)%490, (i*53+h)%100)
}

// shopTemplate renders a product page: most of it (navigation, the same
// boilerplate, the same footer links) is the template's.
func shopTemplate(shop, name, price, nav string, related []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html><html><head><title>%s | %s</title></head><body>`, name, shop)
	b.WriteString(nav)
	fmt.Fprintf(&b, `<main><h1>%s</h1><p class="price">$%s</p>`, name, price)
	b.WriteString(`<p>Free shipping on orders over $50. Returns accepted within 30 days. ` +
		`In stock and ready to ship. Secure checkout. Add to cart. Add to wish list.</p>` +
		`<ul><li>Reviews (0)</li><li>Questions and answers</li><li>Shipping and returns</li></ul>`)
	for _, r := range related {
		b.WriteString(r)
	}
	b.WriteString(`</main><footer><a href="/about">About us</a> <a href="/contact">Contact</a> ` +
		`<a href="/terms">Terms</a> <a href="/privacy">Privacy</a> &copy; 2024 ` + shop + `</footer></body></html>`)
	return b.String()
}

// TestTemplatedShopsAreFullyCrawled crawls three shops of 30 product pages
// each, all from one template with distinct names and prices, with the
// default Config (bar the delay): every product page is fetched and handed
// to the Handler.
func TestTemplatedShopsAreFullyCrawled(t *testing.T) {
	const hosts, products = 3, 30
	nav := `<nav><a href="/">Home</a> <a href="/cart">Cart</a> <a href="/account">Account</a></nav>`
	s := newVhostServer(t, func(w http.ResponseWriter, r *http.Request) {
		host := hostOf(r)
		var h int
		if _, err := fmt.Sscanf(host, "shop%d.test", &h); err != nil {
			http.NotFound(w, r)
			return
		}
		shop := fmt.Sprintf("Shop %d", h)
		switch p := r.URL.Path; {
		case p == "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /cart\nDisallow: /account\n")
		case p == "/":
			var b strings.Builder
			fmt.Fprintf(&b, `<html><head><title>%s</title></head><body>%s<ul>`, shop, nav)
			for i := 0; i < products; i++ {
				fmt.Fprintf(&b, `<li><a href="/product/%d">%s</a> $%s</li>`, i, productName(h, i), productPrice(h, i))
			}
			b.WriteString(`</ul></body></html>`)
			writeHTMLPage(w, b.String())
		case strings.HasPrefix(p, "/product/"):
			var i int
			if _, err := fmt.Sscanf(p, "/product/%d", &i); err != nil || i < 0 || i >= products {
				http.NotFound(w, r)
				return
			}
			writeHTMLPage(w, shopTemplate(shop, productName(h, i), productPrice(h, i), nav, nil))
		case p == "/about" || p == "/contact" || p == "/terms" || p == "/privacy":
			writeHTMLPage(w, `<html><head><title>`+p+`</title></head><body>`+nav+`<p>`+shop+` `+p+`</p></body></html>`)
		default:
			http.NotFound(w, r)
		}
	})
	var seeds []string
	for h := 1; h <= hosts; h++ {
		seeds = append(seeds, fmt.Sprintf("http://shop%d.test/", h))
	}
	var log handledLog
	c := runCrawl(t, crawlkit.Config{
		UserAgent:    testAgent,
		Seeds:        seeds,
		Delay:        2 * time.Millisecond,
		DialContext:  s.dial,
		AllowPrivate: loopback,
		Handler:      log.handle,
	}, time.Minute)

	got := s.counts()
	handled := log.byURL()
	var notFetched, notHandled []string
	for h := 1; h <= hosts; h++ {
		for i := 0; i < products; i++ {
			path := fmt.Sprintf("/product/%d", i)
			host := fmt.Sprintf("shop%d.test", h)
			if got[host+path] == 0 {
				notFetched = append(notFetched, host+path)
			}
			if handled["http://"+host+path] == 0 {
				notHandled = append(notHandled, host+path)
			}
		}
	}
	if len(notFetched) > 0 {
		t.Errorf("%d of %d product pages never requested, e.g. %v", len(notFetched), hosts*products, notFetched[:min(5, len(notFetched))])
	}
	if len(notHandled) > 0 {
		t.Errorf("%d of %d product pages not handed to the Handler, e.g. %v", len(notHandled), hosts*products, notHandled[:min(5, len(notHandled))])
	}
	st := c.Stats()
	if st.URLs.TrapRejected != 0 || st.Hosts.Blocked != 0 {
		t.Errorf("TrapRejected %d, Hosts.Blocked %d; want 0 (links rejected %v)", st.URLs.TrapRejected, st.Hosts.Blocked, st.LinksRejected)
	}
	t.Logf("stats: %+v; links rejected %v", st.URLs, st.LinksRejected)
}

// TestLargeCatalogueIsFullyCrawled crawls a catalogue of 1,200 product
// pages on one host, reached through paginated category pages, every
// product page from one template that links to the same navigation and to
// its neighbours: every product page is fetched.
func TestLargeCatalogueIsFullyCrawled(t *testing.T) {
	const products, perPage = 1200, 40
	nav := `<nav><a href="/">Home</a> <a href="/catalog?page=1">Catalogue</a> <a href="/cart">Cart</a></nav>`
	s := newVhostServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /cart\n")
		case p == "/":
			writeHTMLPage(w, `<html><head><title>Mega Store</title></head><body>`+nav+`</body></html>`)
		case p == "/catalog":
			var n int
			if _, err := fmt.Sscanf(r.URL.Query().Get("page"), "%d", &n); err != nil || n < 1 || (n-1)*perPage >= products {
				http.NotFound(w, r)
				return
			}
			var b strings.Builder
			fmt.Fprintf(&b, `<html><head><title>Catalogue page %d</title></head><body>%s<ul>`, n, nav)
			for i := (n - 1) * perPage; i < min(n*perPage, products); i++ {
				fmt.Fprintf(&b, `<li><a href="/item/%d">%s</a> $%s</li>`, i, productName(0, i), productPrice(0, i))
			}
			b.WriteString(`</ul>`)
			if n > 1 {
				fmt.Fprintf(&b, `<a href="/catalog?page=%d">previous</a> `, n-1)
			}
			if n*perPage < products {
				fmt.Fprintf(&b, `<a href="/catalog?page=%d">next</a>`, n+1)
			}
			b.WriteString(`</body></html>`)
			writeHTMLPage(w, b.String())
		case strings.HasPrefix(p, "/item/"):
			var i int
			if _, err := fmt.Sscanf(p, "/item/%d", &i); err != nil || i < 0 || i >= products {
				http.NotFound(w, r)
				return
			}
			related := []string{fmt.Sprintf(`<a href="/item/%d">%s</a> `, (i+1)%products, productName(0, (i+1)%products)),
				fmt.Sprintf(`<a href="/item/%d">%s</a>`, (i+products-1)%products, productName(0, (i+products-1)%products))}
			writeHTMLPage(w, shopTemplate("Mega Store", productName(0, i), productPrice(0, i), nav, related))
		default:
			http.NotFound(w, r)
		}
	})
	var log handledLog
	c := runCrawl(t, crawlkit.Config{
		UserAgent:       testAgent,
		Seeds:           []string{"http://store.test/"},
		Delay:           crawlkit.NoDelay,
		Workers:         8,
		MaxConnsPerHost: 8,
		DialContext:     s.dial,
		AllowPrivate:    loopback,
		Handler:         log.handle,
	}, 2*time.Minute)

	got := s.counts()
	var missing []string
	for i := 0; i < products; i++ {
		if got[fmt.Sprintf("store.test/item/%d", i)] == 0 {
			missing = append(missing, fmt.Sprintf("/item/%d", i))
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d of %d product pages never requested, e.g. %v", len(missing), products, missing[:min(5, len(missing))])
	}
	st := c.Stats()
	if st.URLs.TrapRejected != 0 || st.Hosts.Blocked != 0 {
		t.Errorf("TrapRejected %d, Hosts.Blocked %d; want 0 (links rejected %v)", st.URLs.TrapRejected, st.Hosts.Blocked, st.LinksRejected)
	}
	t.Logf("stats: %+v; links rejected %v; elapsed %v", st.URLs, st.LinksRejected, st.Elapsed)
}

// --- 3. One permanent 500 -----------------------------------------------

// brokenSite serves a host of 200 pages linked from its home page (in
// pages of 20: /, /list/1 … /list/9), and, when broken is set, a 201st
// link to /broken, which always answers 500.
func brokenSite(t *testing.T, broken bool) *vhostServer {
	const pages = 200
	return newVhostServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		case p == "/broken":
			http.Error(w, "internal error", http.StatusInternalServerError)
		case p == "/":
			var b strings.Builder
			b.WriteString(`<html><head><title>Home</title></head><body>`)
			if broken {
				// First, so that it is leased early, while most of the
				// site is still to be fetched.
				b.WriteString(`<a href="/broken">the broken page</a> `)
			}
			for i := 0; i < pages; i++ {
				fmt.Fprintf(&b, `<a href="/page/%d">page number %d about topic %s</a> `, i, i, docWords[i%len(docWords)])
			}
			b.WriteString(`</body></html>`)
			writeHTMLPage(w, b.String())
		case strings.HasPrefix(p, "/page/"):
			writeHTMLPage(w, `<html><head><title>Page `+p+`</title></head><body><p>The content of `+p+
				` is its own.</p><a href="/">home</a></body></html>`)
		default:
			http.NotFound(w, r)
		}
	})
}

// crawlBrokenSite crawls s (MaxAttempts 3, a small RetryBackoff) and
// returns the crawl's stats.
func crawlBrokenSite(t *testing.T, s *vhostServer) crawlkit.Stats {
	c := runCrawl(t, crawlkit.Config{
		UserAgent:    testAgent,
		Seeds:        []string{"http://site.test/"},
		Delay:        crawlkit.NoDelay,
		Workers:      4,
		DialContext:  s.dial,
		AllowPrivate: loopback,
		RetryBackoff: 5 * time.Millisecond,
		MaxAttempts:  3,
	}, time.Minute)
	return c.Stats()
}

func serverSpan(reqs []rwRequest) time.Duration {
	if len(reqs) < 2 {
		return 0
	}
	return reqs[len(reqs)-1].at.Sub(reqs[0].at)
}

// TestPermanent500DoesNotHoldUpItsHost crawls a 200-page host with one
// link to a URL that always answers 500: the 200 pages are all fetched, the
// broken URL gets a bounded number of requests and is given up
// (NotFetched retry-budget), and the broken URL does not hold the host up:
// the host does not sit idle waiting for it while pages are left to fetch,
// and the crawl takes about as long as the same site without it.
func TestPermanent500DoesNotHoldUpItsHost(t *testing.T) {
	const maxAttempts = 3

	base := brokenSite(t, false)
	baseStats := crawlBrokenSite(t, base)
	baseReqs := base.requests()

	s := brokenSite(t, true)
	st := crawlBrokenSite(t, s)
	reqs := s.requests()

	got := s.counts()
	missing := 0
	for i := 0; i < 200; i++ {
		if got[fmt.Sprintf("site.test/page/%d", i)] == 0 {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of 200 pages never requested", missing)
	}
	brokenReqs := got["site.test/broken"]
	// One request per attempt: the frontier retries, the fetcher does not.
	if brokenReqs != maxAttempts {
		t.Errorf("/broken requested %d times, want %d (MaxAttempts)", brokenReqs, maxAttempts)
	}
	if n := st.URLs.NotFetched[crawlkit.ReasonRetryBudget]; n != 1 {
		t.Errorf("NotFetched[retry-budget] = %d, want 1 (not fetched %v, deferred %v)", n, st.URLs.NotFetched, st.URLs.Deferred)
	}
	if st.Hosts.Blocked != 0 || st.Waiting.RetryAfterHosts != 0 {
		t.Errorf("Hosts.Blocked %d, Waiting.RetryAfterHosts %d; want 0", st.Hosts.Blocked, st.Waiting.RetryAfterHosts)
	}

	// Idle time the broken URL costs its host, from the server's side:
	// the gap after each request to /broken until the next request, while
	// pages were left to fetch. A crawler that waits out a retry backoff
	// inside the lease (the frontier leases one URL of the host at a
	// time) leaves the host idle for the whole backoff, each time.
	remaining := 200
	var idle time.Duration
	var gaps []time.Duration
	for i, r := range reqs {
		if strings.HasPrefix(r.path, "/page/") {
			remaining--
		}
		if r.path == "/broken" && i+1 < len(reqs) && remaining > 0 {
			g := reqs[i+1].at.Sub(r.at)
			idle += g
			gaps = append(gaps, g)
		}
	}
	// The mean gap between two requests of the crawl without /broken: what
	// a request costs on this machine now.
	mean := serverSpan(baseReqs) / time.Duration(max(1, len(baseReqs)-1))
	limit := 500*time.Millisecond + time.Duration(len(gaps))*20*mean
	if idle > limit {
		t.Errorf("the host sat idle %v after requests to /broken while pages were left (gaps %v; mean gap between requests %v; limit %v): the failing URL holds the host up", idle, gaps, mean, limit)
	}
	spanBase, span := serverSpan(baseReqs), serverSpan(reqs)
	if span > 2*spanBase+time.Second {
		t.Errorf("crawl with /broken took %v on the server's clock, without it %v: more than twice as long plus 1 s", span, spanBase)
	}
	t.Logf("without /broken: %d requests in %v (%+v); with it: %d requests in %v, /broken %d requests, idle gaps %v, stats %+v",
		len(baseReqs), spanBase, baseStats.URLs, len(reqs), span, brokenReqs, gaps, st.URLs)
}

// --- 4. A loopback seed without AllowPrivate ----------------------------

// TestLoopbackSeedWithoutAllowPrivateFailsFast seeds a crawl with a
// loopback URL and no AllowPrivate: Run ends at once with
// ErrNothingFetched naming the guard, and the URL counts as refused by the
// guard, not by robots.txt.
func TestLoopbackSeedWithoutAllowPrivateFailsFast(t *testing.T) {
	s := newVhostServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeHTMLPage(w, `<html><body><a href="/a">a</a></body></html>`)
	})
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: testAgent,
		Seeds:     []string{s.srv.URL + "/", s.srv.URL + "/other"},
		Delay:     crawlkit.NoDelay,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = c.Run(ctx)
	if ctx.Err() != nil {
		t.Fatalf("Run took 30 s or more (err %v, stats %+v, waiting %+v)", err, c.Stats().URLs, c.Stats().Waiting)
	}
	if !errors.Is(err, crawlkit.ErrNothingFetched) {
		t.Fatalf("Run = %v, want ErrNothingFetched", err)
	}
	if !strings.Contains(err.Error(), "guard") {
		t.Errorf("error %q does not name the guard", err)
	}
	st := c.Stats()
	if st.URLs.NotFetched[crawlkit.ReasonGuard] < 1 {
		t.Errorf("NotFetched[guard] = %d, want ≥ 1 (not fetched %v)", st.URLs.NotFetched[crawlkit.ReasonGuard], st.URLs.NotFetched)
	}
	if st.URLs.BlockedByRobots != 0 || st.URLs.NotFetched[crawlkit.ReasonRobots] != 0 || st.URLs.NotFetched[crawlkit.ReasonRobotsUnreachable] != 0 {
		t.Errorf("BlockedByRobots %d, not fetched %v: a guard refusal counted as robots", st.URLs.BlockedByRobots, st.URLs.NotFetched)
	}
	if n := len(s.requests()); n != 0 {
		t.Errorf("the loopback server got %d requests, want 0", n)
	}
	t.Logf("Run: %v; elapsed %v", err, st.Elapsed)
}

// --- 8. Stats explain the numbers ---------------------------------------

// TestStatsExplainTheLinks crawls crawltest's web with a depth limit, traps
// and only some of its hosts in scope, and checks that every link not
// followed says why with a Reason's name, and that Stats' counts by reason
// are the sums of what the pages report.
func TestStatsExplainTheLinks(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 8, PagesPerHost: 12, Seed: 41, Agent: "crawlkit-test",
		CrawlDelay: 30 * time.Millisecond})
	var log handledLog
	var lp pageLog
	cfg := crawlConfig(web, &lp)
	cfg.Handler = log.handle
	cfg.Scope = crawlkit.ScopeSameHost
	cfg.Seeds = web.Seeds()[:4]
	cfg.MaxDepth = 3
	cfg.Delay = 5 * time.Millisecond
	c := runCrawl(t, cfg, 2*time.Minute)
	st := c.Stats()

	fromPages, handled, twice := checkLinksExplained(t, log.pages, st)
	if want := st.LinksRejected[crawlkit.ReasonTrap] + st.LinksRejected[crawlkit.ReasonTrapStopped]; st.URLs.TrapRejected != want {
		t.Errorf("TrapRejected %d, LinksRejected trap + trap-stopped %d", st.URLs.TrapRejected, want)
	}
	if want := st.URLs.NotFetched[crawlkit.ReasonRobots] + st.URLs.NotFetched[crawlkit.ReasonCrawlDelay]; st.URLs.BlockedByRobots != want {
		t.Errorf("BlockedByRobots %d, NotFetched robots + crawl-delay %d", st.URLs.BlockedByRobots, want)
	}
	var deferred int64
	for _, n := range st.URLs.Deferred {
		deferred += n
	}
	if deferred != st.URLs.Retried {
		t.Errorf("sum of Deferred %v = %d, Retried %d", st.URLs.Deferred, deferred, st.URLs.Retried)
	}
	// Every discovered URL ended one way: fetched successfully, fetched as
	// another's redirect target, failed, or not fetched for a reason
	// (retry-budget is counted both as failed and not fetched).
	var notFetched int64
	for _, n := range st.URLs.NotFetched {
		notFetched += n
	}
	ended := st.URLs.Successful + st.URLs.FetchedByRedirect + st.URLs.Failed + notFetched - st.URLs.NotFetched[crawlkit.ReasonRetryBudget]
	if st.URLs.Queued != 0 || ended != st.URLs.Discovered {
		t.Errorf("Discovered %d, ended %d (successful %d + by redirect %d + failed %d + not fetched %d - retry-budget %d), queued %d",
			st.URLs.Discovered, ended, st.URLs.Successful, st.URLs.FetchedByRedirect, st.URLs.Failed, notFetched,
			st.URLs.NotFetched[crawlkit.ReasonRetryBudget], st.URLs.Queued)
	}
	if st.URLs.TrapRejected == 0 || st.LinksRejected[crawlkit.ReasonScope] == 0 || st.LinksRejected[crawlkit.ReasonDepth] == 0 {
		t.Errorf("the web should give trap, scope and depth rejections: %v", st.LinksRejected)
	}
	t.Logf("%d handler calls, %d pages, %d handled twice; links rejected %v (from pages %v); stats %+v",
		len(log.pages), len(handled), twice, st.LinksRejected, fromPages, st.URLs)
}

// TestStatsExplainLinksOfDuplicatePages crawls a site where two URLs serve
// one page with a page link, an image and a stylesheet, with
// SkipDuplicateLinks: the links of the second fetched copy are not
// followed, and every one of them, not only its page links, says why
// (near-duplicate, or media and not-a-page-link as on any other page), and
// is counted.
func TestStatsExplainLinksOfDuplicatePages(t *testing.T) {
	copyBody := `<html><head><title>Widget</title><link rel="stylesheet" href="/style.css"></head><body>` +
		`<h1>The widget</h1><p>A widget of many parts, described at length on this page and on its copy.</p>` +
		`<img src="/logo.png" alt="logo"><a href="/next">next</a></body></html>`
	s := newVhostServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		case "/":
			writeHTMLPage(w, `<html><head><title>Home</title></head><body><p>Welcome home, reader.</p><a href="/a">a</a> <a href="/b">b</a></body></html>`)
		case "/a", "/b":
			writeHTMLPage(w, copyBody)
		case "/next":
			writeHTMLPage(w, `<html><head><title>Next</title></head><body><p>The next page is different.</p></body></html>`)
		default:
			http.NotFound(w, r)
		}
	})
	var log handledLog
	c := runCrawl(t, crawlkit.Config{
		UserAgent:          testAgent,
		Seeds:              []string{"http://dup.test/"},
		Delay:              crawlkit.NoDelay,
		DialContext:        s.dial,
		AllowPrivate:       loopback,
		SkipDuplicateLinks: true,
		Handler:            log.handle,
	}, time.Minute)
	st := c.Stats()
	if st.URLs.Duplicates != 1 {
		t.Fatalf("Duplicates = %d, want 1 (one of /a and /b)", st.URLs.Duplicates)
	}
	fromPages, _, _ := checkLinksExplained(t, log.pages, st)
	if st.LinksRejected[crawlkit.ReasonNearDuplicate] < 1 {
		t.Errorf("LinksRejected[near-duplicate] = %d, want ≥ 1", st.LinksRejected[crawlkit.ReasonNearDuplicate])
	}
	t.Logf("links rejected %v, from pages %v", st.LinksRejected, fromPages)
}

// checkLinksExplained checks that every link of the handled pages that was
// not followed names a Reason in Rejected, and that Stats.LinksRejected
// counts, by reason, exactly the rejected link occurrences of the pages
// (each Handler call counts its page's links again, as the links are
// admitted again at each fetch; the rejections of redirect targets, which
// are on no page, are the one thing that could make LinksRejected larger,
// and the webs of these tests have none).
func checkLinksExplained(t *testing.T, pages []*crawlkit.Page, st crawlkit.Stats) (fromPages map[crawlkit.Reason]int64, handled map[string]int, twice int) {
	t.Helper()
	fromPages = map[crawlkit.Reason]int64{}
	handled = map[string]int{}
	var bad []string
	for _, p := range pages {
		handled[p.URL]++
		for _, l := range p.Links {
			if l.Followed {
				if l.Rejected != "" {
					bad = append(bad, fmt.Sprintf("%s on %s: followed and rejected %q", l.Raw, p.URL, l.Rejected))
				}
				continue
			}
			if l.Rejected == "" {
				bad = append(bad, fmt.Sprintf("%s (%s, kind %v) on %s: not followed, no reason", l.Raw, l.URL, l.Kind, p.URL))
				continue
			}
			name, _, _ := strings.Cut(l.Rejected, ": ")
			var r crawlkit.Reason
			if err := r.UnmarshalText([]byte(name)); err != nil {
				bad = append(bad, fmt.Sprintf("%s on %s: Rejected %q names no Reason", l.Raw, p.URL, l.Rejected))
				continue
			}
			fromPages[r]++
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("%d links do not explain themselves, e.g.:\n%s", len(bad), strings.Join(bad[:min(8, len(bad))], "\n"))
	}
	for _, n := range handled {
		if n > 1 {
			twice++
		}
	}
	for r := range mergeKeys(fromPages, st.LinksRejected) {
		if got, want := st.LinksRejected[r], fromPages[r]; got != want {
			t.Errorf("LinksRejected[%s] = %d, the handled pages' links rejected for it: %d", r, got, want)
		}
	}
	return fromPages, handled, twice
}

func mergeKeys(a, b map[crawlkit.Reason]int64) map[crawlkit.Reason]bool {
	m := map[crawlkit.Reason]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}

// --- 9. Handlers that panic or never return -----------------------------

// TestHandlerPanicIsRetried has a Handler that panics at the first call
// for each of some pages: the crawl goes on, those pages are put back
// (Deferred handler-error) and handed on again, and Run returns nil.
func TestHandlerPanicIsRetried(t *testing.T) {
	s := newVhostServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		case p == "/":
			writeHTMLPage(w, `<html><body><a href="/p/1">1</a> <a href="/p/2">2</a> <a href="/p/3">3</a> <a href="/p/4">4</a></body></html>`)
		default:
			writeHTMLPage(w, `<html><body><p>page `+p+`</p><a href="/">home</a></body></html>`)
		}
	})
	var mu sync.Mutex
	calls := map[string]int{}
	c := runCrawl(t, crawlkit.Config{
		UserAgent:    testAgent,
		Seeds:        []string{"http://panic.test/"},
		Delay:        crawlkit.NoDelay,
		DialContext:  s.dial,
		AllowPrivate: loopback,
		RetryBackoff: time.Millisecond,
		Handler: func(_ context.Context, p *crawlkit.Page) error {
			mu.Lock()
			calls[p.URL]++
			n := calls[p.URL]
			mu.Unlock()
			if n == 1 && (strings.HasSuffix(p.URL, "/p/2") || strings.HasSuffix(p.URL, "/p/3")) {
				panic("handler bug on " + p.URL)
			}
			return nil
		},
	}, time.Minute)
	mu.Lock()
	defer mu.Unlock()
	for _, u := range []string{"http://panic.test/", "http://panic.test/p/1", "http://panic.test/p/4"} {
		if calls[u] != 1 {
			t.Errorf("%s handed on %d times, want 1 (calls %v)", u, calls[u], calls)
		}
	}
	for _, u := range []string{"http://panic.test/p/2", "http://panic.test/p/3"} {
		if calls[u] != 2 {
			t.Errorf("%s handed on %d times, want 2: panicked, then retried (calls %v)", u, calls[u], calls)
		}
	}
	st := c.Stats()
	if n := st.URLs.Deferred[crawlkit.ReasonHandlerError]; n != 2 {
		t.Errorf("Deferred[handler-error] = %d, want 2 (deferred %v)", n, st.URLs.Deferred)
	}
	if st.URLs.Successful != 5 || st.URLs.Failed != 0 {
		t.Errorf("Successful %d, Failed %d; want 5 and 0", st.URLs.Successful, st.URLs.Failed)
	}
}

// TestBlockedHandlerIsAbandoned has a Handler that ignores its context and
// blocks: once ctx is cancelled, Run returns within ShutdownGrace and a few
// seconds with ErrAbandoned.
func TestBlockedHandlerIsAbandoned(t *testing.T) {
	s := newVhostServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
			return
		}
		writeHTMLPage(w, `<html><body><a href="/a">a</a></body></html>`)
	})
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	exited := make(chan struct{}, 4)
	t.Cleanup(func() {
		close(release)
		// The abandoned goroutine ends once released.
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Error("the blocked Handler did not return after being released")
		}
	})
	const grace = 200 * time.Millisecond
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent:     testAgent,
		Seeds:         []string{"http://block.test/"},
		Delay:         crawlkit.NoDelay,
		DialContext:   s.dial,
		AllowPrivate:  loopback,
		ShutdownGrace: grace,
		Handler: func(context.Context, *crawlkit.Page) error {
			select {
			case entered <- struct{}{}:
			default:
			}
			<-release // ignores its context
			exited <- struct{}{}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	select {
	case <-entered:
	case err := <-done:
		t.Fatalf("Run returned %v before the Handler was called", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the Handler was not called within 30 s")
	}
	cancel()
	cancelled := time.Now()
	select {
	case err := <-done:
		took := time.Since(cancelled)
		if !errors.Is(err, crawlkit.ErrAbandoned) {
			t.Errorf("Run = %v, want ErrAbandoned", err)
		}
		if !errors.Is(err, context.Canceled) {
			t.Logf("Run's error %v does not wrap context.Canceled", err)
		}
		// ShutdownGrace + a few seconds, generously.
		if took > grace+10*time.Second {
			t.Errorf("Run returned %v after cancellation, want within ShutdownGrace (%v) and a few seconds", took, grace)
		}
		t.Logf("Run returned %v after %v", err, took)
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30 s of cancellation with a blocked Handler")
	}
}
