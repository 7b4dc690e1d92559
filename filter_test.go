package crawlkit_test

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
)

// Allow and deny patterns keep the crawl to /docs/ and off /docs/private/,
// for links and for redirect targets, each refusal counted with its reason.
func TestURLFilters(t *testing.T) {
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/docs/old":
			http.Redirect(w, r, "/cart/x", http.StatusMovedPermanently)
		case "/", "/docs/":
			writeHTML(w, `<a href="/docs/a">a</a><a href="/docs/old">old</a><a href="/cart/x">cart</a>`+
				`<a href="/blog/y">blog</a><a href="/docs/private/z">private</a><a href="/docs/b.pdf">pdf</a>`)
		default:
			writeHTML(w, "<p>"+r.URL.Path+"</p>")
		}
	})
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: testAgent, Seeds: []string{"http://site.test/docs/"}, DialContext: s.dial, AllowPrivate: loopback,
		Delay:     crawlkit.NoDelay,
		AllowURLs: []*regexp.Regexp{crawlkit.MustGlob("http://site.test/docs/**")},
		DenyURLs:  []*regexp.Regexp{crawlkit.MustGlob("http://site.test/docs/private/**"), regexp.MustCompile(`\.pdf$`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	got := slices.Sorted(slices.Values(s.paths["site.test"]))
	s.mu.Unlock()
	if want := []string{"/docs/", "/docs/a", "/docs/old"}; !slices.Equal(got, want) {
		t.Errorf("requested %v, want %v", got, want)
	}
	st := c.Stats()
	// /cart/x, /blog/y, /docs/private/z, /docs/b.pdf as links; /cart/x
	// again as /docs/old's redirect target.
	if n := st.LinksRejected[crawlkit.ReasonFilter]; n != 4 {
		t.Errorf("%d links rejected by the filters, want 4", n)
	}
	if n := st.URLs.NotFetched[crawlkit.ReasonFilter]; n != 1 {
		t.Errorf("%d URLs not fetched for the filters, want 1 (the redirect)", n)
	}
}

func TestGlob(t *testing.T) {
	for _, c := range []struct {
		pattern, url string
		match        bool
	}{
		{"https://example.com/docs/**", "https://example.com/docs/a/b.html", true},
		{"https://example.com/docs/*", "https://example.com/docs/a/b.html", false},
		{"https://example.com/docs/*", "https://example.com/docs/a.html", true},
		{"https://*.example.com/*.pdf", "https://www.example.com/x.pdf", true},
		{"https://*.example.com/*.pdf", "https://www.example.com/a/x.pdf", false},
		{"https://example.com/?", "https://example.com/a", true},
		{"https://example.com/a.b", "https://example.com/axb", false},
		{"https://example.com/[x]", "https://example.com/[x]", true},
	} {
		re, err := crawlkit.Glob(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := re.MatchString(c.url); got != c.match {
			t.Errorf("Glob(%q) on %q = %v, want %v", c.pattern, c.url, got, c.match)
		}
	}
}

func TestFilterConfigErrors(t *testing.T) {
	for name, cfg := range map[string]crawlkit.Config{
		"nil pattern":   {AllowURLs: []*regexp.Regexp{nil}},
		"negative rate": {MaxRequestsPerSecond: -1},
	} {
		cfg.UserAgent, cfg.Seeds = testAgent, []string{"http://a.test/"}
		if _, err := crawlkit.New(cfg); !errors.Is(err, crawlkit.ErrConfig) {
			t.Errorf("%s: New returned %v, want ErrConfig", name, err)
		}
	}
}

// MaxRequestsPerSecond caps the whole crawl, across hosts, as the server
// sees it: the run keeps to the cap's rate, and no second holds much more.
func TestMaxRequestsPerSecond(t *testing.T) {
	var mu sync.Mutex
	var at []time.Time
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		var b strings.Builder
		for i := 0; i < 6; i++ {
			b.WriteString(`<a href="/p` + string(rune('0'+i)) + `">x</a>`)
		}
		writeHTML(w, b.String())
	})
	const cap = 10
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: testAgent, Seeds: []string{"http://a.test/", "http://b.test/", "http://c.test/", "http://d.test/"},
		Scope: crawlkit.ScopeAny, DialContext: s.dial, AllowPrivate: loopback, Delay: crawlkit.NoDelay, Workers: 8,
		MaxRequestsPerSecond: cap,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(at) < 2*cap {
		t.Fatalf("only %d requests; the test needs more than two seconds' worth", len(at))
	}
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	// The limiter spaces the requests as they leave; on a loaded machine
	// some reach the server late, bunched with the next ones, so a
	// one-second window may hold a few more than the cap (half of it is
	// allowed), while the whole run keeps to the cap's rate.
	for i := range at {
		j := i
		for j < len(at) && at[j].Sub(at[i]) < time.Second {
			j++
		}
		if n := j - i; n > cap+1+cap/2 {
			t.Fatalf("%d requests within one second from %v, over the cap of %d", n, at[i], cap)
		}
	}
	if span := at[len(at)-1].Sub(at[0]).Seconds(); float64(len(at)-2)/span > 1.1*cap {
		t.Errorf("%d requests in %.2f s: over the cap of %d a second", len(at), span, cap)
	}
}
