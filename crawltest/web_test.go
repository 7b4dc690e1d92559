package crawltest_test

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/crawltest"
)

func TestCanonical(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://h0001.test/docs/a-b-7.html", "http://h0001.test/docs/a-b-7.html"},
		{"HTTP://H0001.TEST/docs/a-b-7.html", "http://h0001.test/docs/a-b-7.html"},
		{"http://h0001.test:80/docs/a-b-7.html", "http://h0001.test/docs/a-b-7.html"},
		{"http://h0001.test:/", "http://h0001.test/"},
		{"http://h0001.test./", "http://h0001.test/"},
		{"http://h0001.test:8080/", "http://h0001.test:8080/"},
		{"https://h0001.test:443/x", "https://h0001.test/x"},
		{"https://h0001.test:80/x", "https://h0001.test:80/x"},
		{"http://user:pw@h0001.test/x", "http://h0001.test/x"},
		{"http://h0001.test", "http://h0001.test/"},
		{"http://h0001.test/docs/a-b-7.html#part-3", "http://h0001.test/docs/a-b-7.html"},
		{"http://h0001.test/docs/a-b-7.html?", "http://h0001.test/docs/a-b-7.html"},
		{"http://h0001.test/docs/a-b-7.html?utm_source=x&utm_medium=y", "http://h0001.test/docs/a-b-7.html"},
		{"http://h0001.test/shop/item?id=5&cat=maple", "http://h0001.test/shop/item?cat=maple&id=5"},
		{"http://h0001.test/shop/item?id=5&&gclid=1&cat=maple&fbclid=2", "http://h0001.test/shop/item?cat=maple&id=5"},
		{"http://h0001.test/%7Eteam/a%2db-4.html", "http://h0001.test/~team/a-b-4.html"},
		{"http://h0001.test/a%2fb%3F", "http://h0001.test/a%2Fb%3F"},
		{"http://h0001.test/100%", "http://h0001.test/100%25"},
		{"http://h0001.test/docs/./../blog/x.html", "http://h0001.test/blog/x.html"},
		{"http://h0001.test/../../x", "http://h0001.test/x"},
		{"http://h0001.test/a/b/..", "http://h0001.test/a/"},
		{"http://h0001.test/account/?sessionid=abc", "http://h0001.test/account/?sessionid=abc"},
		{"http://[::1]:80/x", "http://[::1]/x"},
	} {
		got, err := crawltest.Canonical(c.in)
		if err != nil || got != c.want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "/docs/x.html", "mailto:a@h0001.test", "ftp://h0001.test/", "http:///x", "http://h:x/", "http://[::1/"} {
		if got, err := crawltest.Canonical(in); !errors.Is(err, crawltest.ErrNotHTTP) {
			t.Errorf("Canonical(%q) = %q, %v; want ErrNotHTTP", in, got, err)
		}
	}
}

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		"http://h0001.test/docs/a-b-7.html", "HTTP://H0001.TEST:80/%7Eteam/a%2Db?b=1&a=2&utm_source=x#f",
		"http://a/b/../../c/./d?", "https://[::1]:443/%%41", "http://u@h:0/%2e%2E/x?%75tm_x=1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := crawltest.Canonical(s)
		if err != nil {
			return
		}
		again, err := crawltest.Canonical(c)
		if err != nil || again != c {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", s, c, again, err)
		}
	})
}

func TestConfigValidation(t *testing.T) {
	for _, cfg := range []crawltest.Config{
		{Hosts: -1},
		{LinksPerPage: -3},
		{Agent: "bad agent/1.0"},
		{RobotsVariants: []crawltest.RobotsVariant{}},
		{RobotsVariants: []crawltest.RobotsVariant{42}},
		{CrawlDelay: time.Microsecond},
		{Hosts: 2_000_000},
	} {
		if web, err := crawltest.NewWeb(cfg); !errors.Is(err, crawltest.ErrConfig) {
			if web != nil {
				web.Close()
			}
			t.Errorf("NewWeb(%+v): %v, want ErrConfig", cfg, err)
		}
	}
}

func get(t *testing.T, web *crawltest.Web, u string) (*http.Response, []byte) {
	t.Helper()
	resp, err := web.Client().Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// Pages are deterministic from the seed, sized 10–30 KB, and their links
// use every spelling a crawler has to fold.
func TestPages(t *testing.T) {
	cfg := crawltest.Config{Hosts: 6, PagesPerHost: 30, Seed: 42, RobotsVariants: []crawltest.RobotsVariant{crawltest.RobotsMissing}}
	web, err := crawltest.NewWeb(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	again, err := crawltest.NewWeb(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	cfg.Seed = 43
	other, err := crawltest.NewWeb(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	truth := web.Truth()
	if len(truth.Pages) < 6*30 {
		t.Fatalf("only %d pages reachable in an all-allowed web", len(truth.Pages))
	}
	spellings := map[string]*regexp.Regexp{
		"document-relative": regexp.MustCompile(`href="[a-z][^":]*"`),
		"dot-dot":           regexp.MustCompile(`href="\.\./`),
		"dot-segments":      regexp.MustCompile(`href="/[^"]*/\./\.\./`),
		"absolute":          regexp.MustCompile(`href="http://h\d+\.test/`),
		"scheme-relative":   regexp.MustCompile(`href="//h\d+\.test/`),
		"upper-case host":   regexp.MustCompile(`href="http://H\d+\.TEST/`),
		"default port":      regexp.MustCompile(`href="http://h\d+\.test:80/`),
		"fragment":          regexp.MustCompile(`href="[^"#]+#part-\d"`),
		"tracking":          regexp.MustCompile(`href="[^"]*[?;]utm_source=`),
		"escaped tilde":     regexp.MustCompile(`href="[^"]*%7Eteam/`),
		"escaped hyphen":    regexp.MustCompile(`href="[^"]*%2D`),
		"empty query":       regexp.MustCompile(`href="[^"?]+\?"`),
		"reordered query":   regexp.MustCompile(`href="[^"]*\?id=\d+&amp;cat=`),
		"cross-host":        regexp.MustCompile(`href="(http:)?//h0*[1-5]\.test/`),
		"mailto":            regexp.MustCompile(`href="mailto:`),
		"javascript":        regexp.MustCompile(`href="javascript:`),
		"print version":     regexp.MustCompile(`href="[^"]*print=1"`),
		"index.html":        regexp.MustCompile(`href="/index.html"`),
	}
	seen := make(map[string]bool)
	for i, u := range truth.URLs() {
		if !strings.HasPrefix(u, "http://h0000.test/") && i%5 != 0 {
			continue
		}
		resp, body := get(t, web, u)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Fatalf("%s: %s %q", u, resp.Status, resp.Header.Get("Content-Type"))
		}
		if len(body) < 10<<10 || len(body) > 30<<10 {
			t.Errorf("%s: %d bytes, want 10–30 KB", u, len(body))
		}
		for _, want := range []string{"<nav>", "<ul", "<li>", "<p>", "<h1>", "</html>"} {
			if !strings.Contains(string(body), want) {
				t.Errorf("%s: no %s", u, want)
			}
		}
		for name, re := range spellings {
			if re.Match(body) {
				seen[name] = true
			}
		}
		if _, same := get(t, again, u); string(same) != string(body) {
			t.Errorf("%s differs between two webs with the same seed", u)
		}
		if _, diff := get(t, other, u); string(diff) == string(body) {
			t.Errorf("%s is the same under another seed", u)
		}
	}
	for name := range spellings {
		if !seen[name] {
			t.Errorf("no link spelled %s", name)
		}
	}

	// Every spelling of a page is served the page, conditional requests
	// work, and unknown URLs are 404.
	root, _ := get(t, web, "http://h0000.test/")
	etag := root.Header.Get("ETag")
	req, _ := http.NewRequest(http.MethodGet, "http://H0000.test:80/?utm_campaign=x", nil)
	req.Header.Set("If-None-Match", etag)
	resp, err := web.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if etag == "" || resp.StatusCode != http.StatusNotModified {
		t.Errorf("conditional GET: ETag %q, status %d", etag, resp.StatusCode)
	}
	for _, u := range []string{"http://h0000.test/nope", "http://h0000.test/docs/x-1.html", "http://h0000.test/shop/item?id=5", "http://h0000.test/?a=1"} {
		if resp, _ := get(t, web, u); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", u, resp.StatusCode)
		}
	}
}

func TestRobotsVariantsServed(t *testing.T) {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 6, Agent: "mybot", CrawlDelay: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	want := []struct {
		status   int
		contains []string
		delay    time.Duration
	}{
		{200, []string{"User-agent: *", "Disallow: /private/", "Disallow: /tmp\n"}, 0},
		{404, nil, 0},
		{503, nil, 0},
		{200, []string{"Crawl-delay: 1.5"}, 1500 * time.Millisecond},
		{200, []string{"User-agent: otherbot\nDisallow: /\n", "User-agent: mybot\nCrawl-delay: 1.5\nDisallow: /news/"}, 1500 * time.Millisecond},
		{200, []string{"Disallow: /*?print=", "Disallow: /shop/item$", "Allow: /private/*.html$"}, 0},
	}
	for i, h := range web.Hosts() {
		resp, body := get(t, web, "http://"+h.Name+"/robots.txt")
		if resp.StatusCode != want[i].status || h.CrawlDelay != want[i].delay {
			t.Errorf("%s (%s): status %d, delay %v", h.Name, h.Robots, resp.StatusCode, h.CrawlDelay)
		}
		for _, s := range want[i].contains {
			if !strings.Contains(string(body), s) {
				t.Errorf("%s: robots.txt lacks %q:\n%s", h.Name, s, body)
			}
		}
	}
}

// Every trap mints new URLs without end.
func TestTrapsAreEndless(t *testing.T) {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 12, PagesPerHost: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	truth := web.Truth()
	kinds := make(map[crawltest.TrapKind]bool)
	for _, h := range web.Hosts() {
		if h.Trap == crawltest.NoTrap {
			continue
		}
		kinds[h.Trap] = true
		var entry string
		for _, e := range truth.TrapEntries {
			if strings.Contains(e, h.Name) {
				entry = e
			}
		}
		if entry == "" {
			t.Fatalf("%s (%s): no trap entry in the truth", h.Name, h.Trap)
		}
		seen := map[string]bool{}
		u := entry
		for hop := 0; hop < 25; hop++ {
			if seen[u] || !truth.IsTrap(u) {
				t.Fatalf("%s (%s): hop %d to %s (seen %v, trap %v)", h.Name, h.Trap, hop, u, seen[u], truth.IsTrap(u))
			}
			seen[u] = true
			resp, body := get(t, web, u)
			if resp.StatusCode != 200 {
				t.Fatalf("%s: %d", u, resp.StatusCode)
			}
			base, _ := url.Parse(u)
			next := ""
			for _, href := range hrefs(body) {
				if f, ok := fold(base, href); ok && truth.IsTrap(f) && !seen[f] {
					next = f
					break
				}
			}
			if next == "" {
				t.Fatalf("%s (%s): %s leads nowhere new", h.Name, h.Trap, u)
			}
			u = next
		}
	}
	if len(kinds) != 4 {
		t.Errorf("trap kinds present: %v", kinds)
	}
	if rep := web.Report(); rep.TrapFetches != 4*25 {
		t.Errorf("TrapFetches = %d, want %d", rep.TrapFetches, 4*25)
	}
}

// Every host spelling that DialContext and Canonical accept reaches the
// host and is accounted: a trailing dot before the port too.
func TestHostSpellings(t *testing.T) {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 2, PagesPerHost: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	spellings := []string{"http://h0001.test/", "http://H0001.TEST/", "http://h0001.test./", "http://h0001.test:80/", "http://h0001.test.:80/", "http://H0001.Test.:80/"}
	for _, u := range spellings {
		if c, err := crawltest.Canonical(u); err != nil || c != "http://h0001.test/" {
			t.Fatalf("Canonical(%q) = %q, %v", u, c, err)
		}
		if status := fetch(t, web, "crawlkit", u); status != http.StatusOK {
			t.Errorf("%s: status %d", u, status)
		}
	}
	if rep := web.Report(); rep.Requests != len(spellings) || rep.PerPage["http://h0001.test/"] != len(spellings) {
		t.Errorf("Requests %d, PerPage %v; want %d each", rep.Requests, rep.PerPage, len(spellings))
	}
}
