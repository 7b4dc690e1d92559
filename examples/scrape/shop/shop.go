// Package shop is a small templated web shop for the scrape example and
// its side-by-side run against colly: a few hosts, each with categories,
// paginated listings and product pages that differ only in name, price and
// a line of text (so a near-duplicate detector sees them as one page).
// Every host serves a robots.txt that disallows its cart and asks for a
// Crawl-delay, and the shop keeps the server's own account of what was
// requested.
package shop

import (
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Product is one product as its page shows it.
type Product struct {
	URL, Title, Price string
}

// Config sizes the shop.
type Config struct {
	Hosts            int           // default 3
	ProductsPerHost  int           // default 30
	PerPage          int           // listing page size; default 10
	CrawlDelay       time.Duration // robots.txt Crawl-delay; default 100ms
	Now              func() time.Time
	ProductsPerGroup int // products per category; default 15
}

// Shop is a running shop on loopback.
type Shop struct {
	cfg   Config
	hosts []*host
	mu    sync.Mutex
	log   map[string][]hit // per host
}

type host struct {
	srv  *http.Server
	ln   net.Listener
	base string
}

type hit struct {
	path string
	at   time.Time
}

// Start serves cfg.Hosts hosts on 127.0.0.1, one port each.
func Start(cfg Config) (*Shop, error) {
	if cfg.Hosts == 0 {
		cfg.Hosts = 3
	}
	if cfg.ProductsPerHost == 0 {
		cfg.ProductsPerHost = 30
	}
	if cfg.PerPage == 0 {
		cfg.PerPage = 10
	}
	if cfg.ProductsPerGroup == 0 {
		cfg.ProductsPerGroup = 15
	}
	if cfg.CrawlDelay == 0 {
		cfg.CrawlDelay = 100 * time.Millisecond
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Shop{cfg: cfg, log: map[string][]hit{}}
	for i := 0; i < cfg.Hosts; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			s.Close()
			return nil, err
		}
		h := &host{ln: ln, base: "http://" + ln.Addr().String()}
		hi := i
		h.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(hi, w, r) }), ReadHeaderTimeout: 5 * time.Second}
		go h.srv.Serve(ln)
		s.hosts = append(s.hosts, h)
	}
	return s, nil
}

// Close stops every host.
func (s *Shop) Close() {
	for _, h := range s.hosts {
		h.srv.Close()
	}
}

// Seeds are the hosts' home pages.
func (s *Shop) Seeds() []string {
	var out []string
	for _, h := range s.hosts {
		out = append(out, h.base+"/")
	}
	return out
}

// Products is the ground truth: every product of every host, by URL.
func (s *Shop) Products() []Product {
	var out []Product
	for hi, h := range s.hosts {
		for id := 1; id <= s.cfg.ProductsPerHost; id++ {
			out = append(out, Product{URL: fmt.Sprintf("%s/product/%d", h.base, id), Title: s.title(hi, id), Price: price(hi, id)})
		}
	}
	return out
}

func (s *Shop) title(hi, id int) string {
	adjectives := []string{"Sturdy", "Compact", "Classic", "Bright", "Quiet", "Light"}
	things := []string{"Kettle", "Lamp", "Chair", "Backpack", "Teapot", "Clock", "Notebook"}
	return fmt.Sprintf("%s %s No. %d", adjectives[(hi+id)%len(adjectives)], things[(hi*7+id)%len(things)], hi*1000+id)
}

func price(hi, id int) string {
	return fmt.Sprintf("%d.%02d", 5+(hi*37+id*13)%90, (id*29)%100)
}

const page = `<!doctype html><html><head><title>%s | Example Shop</title></head><body>
<header><a href="/">Home</a> <a href="/category/1">Kitchen</a> <a href="/category/2">Living</a> <a href="/cart">Cart</a></header>
<nav>Free delivery on orders over 50. Returns within 30 days. Customer service answers every day from 8 to 20.</nav>
<main>%s</main>
<footer>Example Shop · Terms · Privacy · Imprint · Newsletter · Payment methods · Shipping · Contact</footer>
</body></html>`

func (s *Shop) serve(hi int, w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.log[s.hosts[hi].base] = append(s.log[s.hosts[hi].base], hit{path: r.URL.RequestURI(), at: s.cfg.Now()})
	s.mu.Unlock()
	groups := (s.cfg.ProductsPerHost + s.cfg.ProductsPerGroup - 1) / s.cfg.ProductsPerGroup
	switch p := r.URL.Path; {
	case p == "/robots.txt":
		fmt.Fprintf(w, "User-agent: *\nDisallow: /cart\nCrawl-delay: %g\n", s.cfg.CrawlDelay.Seconds())
	case p == "/":
		var b strings.Builder
		for g := 1; g <= groups; g++ {
			fmt.Fprintf(&b, `<p><a href="/category/%d">Category %d</a></p>`, g, g)
		}
		fmt.Fprintf(w, page, "Home", b.String())
	case strings.HasPrefix(p, "/category/"):
		g, err := strconv.Atoi(strings.TrimPrefix(p, "/category/"))
		if err != nil || g < 1 || g > groups {
			http.NotFound(w, r)
			return
		}
		first := (g-1)*s.cfg.ProductsPerGroup + 1
		last := min(g*s.cfg.ProductsPerGroup, s.cfg.ProductsPerHost)
		n := last - first + 1
		pages := (n + s.cfg.PerPage - 1) / s.cfg.PerPage
		pg, _ := strconv.Atoi(r.URL.Query().Get("page"))
		pg = max(pg, 1)
		var b strings.Builder
		b.WriteString(`<ul class="products">`)
		for id := first + (pg-1)*s.cfg.PerPage; id <= last && id < first+pg*s.cfg.PerPage; id++ {
			fmt.Fprintf(&b, `<li><a class="product" href="/product/%d">%s</a></li>`, id, s.title(hi, id))
		}
		b.WriteString(`</ul>`)
		if pg < pages {
			fmt.Fprintf(&b, `<a class="next" href="/category/%d?page=%d">Next</a>`, g, pg+1)
		}
		fmt.Fprintf(w, page, fmt.Sprintf("Category %d", g), b.String())
	case strings.HasPrefix(p, "/product/"):
		id, err := strconv.Atoi(strings.TrimPrefix(p, "/product/"))
		if err != nil || id < 1 || id > s.cfg.ProductsPerHost {
			http.NotFound(w, r)
			return
		}
		t := s.title(hi, id)
		fmt.Fprintf(w, page, t, fmt.Sprintf(`<h1 class="name">%s</h1><p>Price: <span class="price">%s</span></p>
<p>A dependable choice for every home.</p><a href="/cart?add=%d">Add to cart</a>`, t, price(hi, id), id))
	case p == "/cart":
		fmt.Fprintf(w, page, "Cart", "Your cart is empty.")
	default:
		http.NotFound(w, r)
	}
}

// Report is the shop's own account of a crawl.
type Report struct {
	Requests int
	// RobotsViolations counts requests for the disallowed cart.
	RobotsViolations int
	// TooSoon counts requests to a host less than the Crawl-delay after
	// the previous one (robots.txt itself included); MinGap is the
	// shortest gap seen.
	TooSoon int
	MinGap  time.Duration
	// Repeats counts requests for a path the host served before.
	Repeats int
}

// Report returns the account so far.
func (s *Shop) Report() Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := Report{MinGap: -1}
	for _, hits := range s.log {
		sort.SliceStable(hits, func(i, j int) bool { return hits[i].at.Before(hits[j].at) })
		seen := map[string]bool{}
		for i, h := range hits {
			r.Requests++
			if strings.HasPrefix(h.path, "/cart") {
				r.RobotsViolations++
			}
			if seen[h.path] {
				r.Repeats++
			}
			seen[h.path] = true
			if i > 0 {
				gap := h.at.Sub(hits[i-1].at)
				if r.MinGap < 0 || gap < r.MinGap {
					r.MinGap = gap
				}
				if gap < s.cfg.CrawlDelay {
					r.TooSoon++
				}
			}
		}
	}
	return r
}
