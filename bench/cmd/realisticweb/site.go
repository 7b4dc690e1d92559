package main

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// The web's shape: hosts of 10–20 pages each, page sizes drawn from a
// log-normal distribution, robots.txt variants, links. Every property is a
// function of (seed, host, page, slot) through hash, so a web is the same
// every time it is built with the same flags.

// Host i is hNNNN.test: each host a domain of its own under the reserved
// .test TLD (RFC 6761), as separate sites are, so that no crawler takes
// thousands of hosts under one domain for a host-minting trap.
func hostName(i int) string { return fmt.Sprintf("h%04d.test", i) }

// robotsKind is what a host's /robots.txt serves.
type robotsKind int

const (
	robotsPrivate      robotsKind = iota // Disallow: /private/
	robotsPrivateDelay                   // Disallow: /private/ and Crawl-delay
	robotsMissing                        // 404: everything allowed
	robotsAllowAll                       // an empty Disallow
)

// crawlDelay is the Crawl-delay of robotsPrivateDelay hosts.
const crawlDelay = 250 * time.Millisecond

func (k robotsKind) text() string {
	switch k {
	case robotsPrivate:
		return "User-agent: *\nDisallow: /private/\n"
	case robotsPrivateDelay:
		return fmt.Sprintf("User-agent: *\nDisallow: /private/\nCrawl-delay: %g\n", crawlDelay.Seconds())
	case robotsAllowAll:
		return "User-agent: *\nDisallow:\n"
	}
	return ""
}

// disallows reports whether the host's robots.txt disallows path.
func (k robotsKind) disallows(path string) bool {
	return (k == robotsPrivate || k == robotsPrivateDelay) && strings.HasPrefix(path, "/private/")
}

func (k robotsKind) delay() time.Duration {
	if k == robotsPrivateDelay {
		return crawlDelay
	}
	return 0
}

type host struct {
	name   string
	first  int // index of its first page in site.pages
	n      int // pages
	robots robotsKind
}

type page struct {
	host  int
	path  string
	links []int32 // distinct pages it links to, in first-link order
	// size is the decoded length; nLinks the <a href> slots it has.
	size, nLinks int
}

type site struct {
	seed  uint64
	hosts []host
	pages []page
	// byHostPath maps "host"+"path" (canonical) to a page index.
	byHostPath map[string]int
}

var sections = []string{"news", "world", "business", "sport", "culture", "opinion", "science", "technology", "politics", "travel"}

// newSite lays out nHosts hosts of minPages–maxPages pages each.
func newSite(seed uint64, nHosts, minPages, maxPages int) *site {
	s := &site{seed: seed, byHostPath: make(map[string]int)}
	for h := 0; h < nHosts; h++ {
		n := minPages + int(s.hash(1, uint64(h), 0)%uint64(maxPages-minPages+1))
		r := s.hash(2, uint64(h), 0) % 100
		kind := robotsPrivate
		switch {
		case r >= 90:
			kind = robotsAllowAll
		case r >= 75:
			kind = robotsMissing
		case r >= 60:
			kind = robotsPrivateDelay
		}
		s.hosts = append(s.hosts, host{name: hostName(h), first: len(s.pages), n: n, robots: kind})
		for q := 0; q < n; q++ {
			p := page{host: h, path: s.pathOf(h, q)}
			s.byHostPath[s.hosts[h].name+p.path] = len(s.pages)
			s.pages = append(s.pages, p)
		}
	}
	return s
}

// pathOf names page q of host h: "/" for the home page, about one page in
// ten under /private/, the rest in sections.
func (s *site) pathOf(h, q int) string {
	if q == 0 {
		return "/"
	}
	r := s.hash(3, uint64(h), uint64(q))
	if r%10 == 0 {
		return fmt.Sprintf("/private/report-%d.html", q)
	}
	return fmt.Sprintf("/%s/2026/%02d/story-%d.html", sections[r/10%uint64(len(sections))], 1+r/100%12, q)
}

// pageSize draws a page's decoded size: log-normal with median 100 KB and
// σ 0.9 (99th percentile about 800 KB), within 8 KB–1 MB.
func (s *site) pageSize(id int) int {
	u1 := (float64(s.hash(4, uint64(id), 0)>>11) + 0.5) / (1 << 53)
	u2 := (float64(s.hash(5, uint64(id), 0)>>11) + 0.5) / (1 << 53)
	z := math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2) // Box–Muller
	size := 100_000 * math.Exp(0.9*z)
	return int(min(max(size, 8_000), 1_000_000))
}

// link returns what slot k of page id links to, and how it is written:
// mostly pages of the same host (relative or absolute URLs), one link in
// twelve to another host, a few with a fragment or tracking parameters
// that a crawler must fold into the page's URL.
func (s *site) link(id, k int) (target int, href string) {
	p := s.pages[id]
	h := s.hosts[p.host]
	r := s.hash(6, uint64(id), uint64(k))
	var t int
	abs := false
	if r%12 == 0 {
		oh := s.hosts[s.hash(7, uint64(id), uint64(k))%uint64(len(s.hosts))]
		q := 0
		if r/12%2 == 1 {
			q = int(r / 24 % uint64(oh.n))
		}
		t, abs = oh.first+q, true
	} else {
		t = h.first + int(r/12%uint64(h.n))
		abs = r/1000%3 == 0
	}
	tp := s.pages[t]
	if abs {
		href = "https://" + s.hosts[tp.host].name + tp.path
	} else {
		href = tp.path
	}
	switch r / 100_000 % 100 {
	case 0, 1, 2, 3:
		href += "#comments"
	case 4, 5, 6:
		href += "?utm_source=newsletter&amp;utm_medium=email"
	}
	return t, href
}

func (s *site) hash(salt, a, b uint64) uint64 {
	return mix64(mix64(mix64(s.seed^salt*0x9e3779b97f4a7c15)^a) ^ b)
}

// mix64 is the SplitMix64 finaliser.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
