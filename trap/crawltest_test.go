package trap_test

import (
	"bytes"
	"hash/fnv"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/trap"
)

// TestCrawltestWeb crawls crawltest's synthetic web through a Detector: every
// link found is judged (in crawltest's canonical form, which keeps session
// parameters, so the detector meets the session trap unaided), and a page is
// fetched when the detector accepts it and it is a page of the ground truth
// or lies inside a trap. Every trap kind must be stopped within 10 fetches
// per trap host, and no page of the truth (reachable, robots-allowed, not a
// trap) may be rejected.
func TestCrawltestWeb(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls a synthetic web over loopback HTTP")
	}
	w, err := crawltest.NewWeb(crawltest.Config{Hosts: 24, PagesPerHost: 40, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	truth := w.Truth()
	client := w.Client()
	client.Timeout = 10 * time.Second
	d := trap.New(trap.Config{})
	now := time.Date(2025, time.November, 21, 0, 0, 0, 0, time.UTC)

	type item struct {
		url   string
		depth int
	}
	queued := map[string]bool{}
	var queue []item
	for _, s := range w.Seeds() {
		queued[s] = true
		queue = append(queue, item{s, 0})
	}
	trapFetches := map[string]int{} // host → fetches inside its trap
	var falseRejections []string
	rejectedTruth := map[string]bool{}
	byRule := map[trap.Rule]int{}
	fetched := 0
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if truth.IsTrap(it.url) {
			trapFetches[hostOf(it.url)]++
		}
		body := get(t, client, it.url)
		fetched++
		found := links(t, it.url, body)
		if v := d.ObservePage(trap.Page{URL: it.url, Fingerprint: fingerprint(body), Links: found}); v.Rejected() {
			byRule[v.Rule]++
			continue
		}
		for _, link := range found {
			if queued[link] {
				continue
			}
			_, inTruth := truth.Pages[link]
			if !inTruth && !truth.IsTrap(link) {
				continue // robots-disallowed or broken: a crawler would not fetch it either
			}
			v := d.JudgeAt(now, trap.Candidate{URL: link, Source: it.url, Depth: it.depth + 1})
			if v.Rejected() {
				byRule[v.Rule]++
				if inTruth && !rejectedTruth[link] {
					rejectedTruth[link] = true
					falseRejections = append(falseRejections, link+": "+v.Reason)
				}
				continue
			}
			queued[link] = true
			queue = append(queue, item{link, it.depth + 1})
		}
	}

	t.Logf("fetched %d URLs; truth has %d pages; rejections by rule: %v", fetched, len(truth.Pages), byRule)
	for _, fr := range falseRejections {
		t.Errorf("truth page rejected: %s", fr)
	}
	for _, u := range truth.URLs() {
		if !queued[u] && !rejectedTruth[u] {
			t.Errorf("truth page never reached: %s", u)
		}
	}
	kinds := map[crawltest.TrapKind]int{}
	for _, h := range w.Hosts() {
		if h.Trap == crawltest.NoTrap {
			continue
		}
		kinds[h.Trap]++
		n := trapFetches[h.Name]
		t.Logf("%s (%s): %d fetches inside the trap", h.Name, h.Trap, n)
		if n > 10 {
			t.Errorf("%s: the %s trap took %d fetches, want at most 10", h.Name, h.Trap, n)
		}
	}
	for _, k := range []crawltest.TrapKind{crawltest.TrapCalendar, crawltest.TrapRepeatingPath, crawltest.TrapSessionID, crawltest.TrapGrowingQuery} {
		if kinds[k] == 0 {
			t.Errorf("the web has no %s trap to test", k)
		}
	}
}

func get(t *testing.T, c *http.Client, u string) []byte {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	return body
}

// links returns the canonical URLs of the http(s) links of an HTML page.
func links(t *testing.T, base string, body []byte) []string {
	t.Helper()
	b, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return out
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		for {
			key, val, more := z.TagAttr()
			if string(key) == "href" {
				if ref, err := b.Parse(strings.TrimSpace(string(val))); err == nil {
					if c, err := crawltest.Canonical(ref.String()); err == nil {
						out = append(out, c)
					}
				}
			}
			if !more {
				break
			}
		}
	}
}

func hostOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Host
}

// fingerprint stands in for a SimHash of the page: an exact hash of the
// body, so only byte-identical pages count as the same content.
func fingerprint(body []byte) uint64 {
	h := fnv.New64a()
	h.Write(body)
	return h.Sum64()
}
