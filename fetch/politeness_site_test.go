package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// siteCrawl is what crawlSite measured, in time on its fake clock.
type siteCrawl struct {
	requests map[string]int // per path
	goodDone time.Duration  // when the last page answering 200 was fetched
	backoffs int            // host-wide error backoffs the Politeness started
	blocked  bool           // the host ended in a block (Retry-After or backoff)
}

// crawlSite crawls one host of good pages plus the bad ones (which always
// answer 500) the way a crawler's worker does (Frontier.NextAt, Fetch,
// Frontier.DoneAt, a 5xx settled as a retry), with one worker, a Fetcher and
// a Frontier sharing one Politeness (1 s delay) and a fake clock that moves
// only when someone waits. Everything it measures is a function of the
// scheduling alone, so it is the same on any machine.
func crawlSite(t *testing.T, good int, bad ...string) siteCrawl {
	t.Helper()
	var mu sync.Mutex
	requests := map[string]int{}
	isBad := map[string]bool{}
	for _, p := range bad {
		isBad[p] = true
	}
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests[r.URL.Path]++
		mu.Unlock()
		if isBad[r.URL.Path] {
			http.Error(w, "broken page", http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, "<html>%s</html>", r.URL.Path)
	}))
	clock := newFakeClock()
	start := clock.Now()
	pol := NewPoliteness(PolitenessConfig{Delay: time.Second, Rand: func() float64 { return 0.5 }})
	f := newTestFetcher(t, web, func(c *Config) {
		UseClock(c, clock)
		c.Politeness = pol
	})
	fr, err := frontier.New(frontier.Config{Politeness: pol, Now: clock.Now, LeaseTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fr.Close() })
	// The bad pages come first: that is where they hurt most.
	var entries []frontier.Entry
	for _, p := range bad {
		entries = append(entries, frontier.Entry{URL: "http://site.test" + p})
	}
	for i := range good {
		entries = append(entries, frontier.Entry{URL: fmt.Sprintf("http://site.test/p/%d", i)})
	}
	if err := fr.AddAt(start, entries...); err != nil {
		t.Fatal(err)
	}

	var res siteCrawl
	for round := 0; ; round++ {
		if round > 10*(good+len(bad))+100 {
			t.Fatalf("crawl not finished after %d rounds", round)
		}
		now := clock.Now()
		l, at, err := fr.NextAt(now)
		if err != nil {
			t.Fatal(err)
		}
		if l == nil {
			if at.IsZero() {
				break
			}
			clock.Advance(at.Sub(now))
			continue
		}
		var o frontier.Outcome
		resp, err := f.Fetch(context.Background(), l.URL)
		var hb *HostBlockedError
		switch {
		case errors.As(err, &hb):
			o = frontier.Retry(hb.Until.Sub(clock.Now()))
		case err != nil:
			t.Fatalf("%s: %v", l.URL, err)
		case resp.StatusCode >= 500:
			o = frontier.Retry(0)
		default:
			o = frontier.Success(0)
			res.goodDone = clock.Now().Sub(start)
		}
		if _, err := fr.DoneAt(clock.Now(), l, o); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	res.requests = requests
	mu.Unlock()
	pol.mu.Lock()
	if h := pol.hosts["site.test"]; h != nil {
		res.backoffs = h.backoffs
		res.blocked = h.blockedUntil.After(clock.Now())
	}
	pol.mu.Unlock()
	return res
}

// TestOneFailingURLDoesNotSlowItsSite crawls a 200-page site with and
// without one page that always answers 500. Measured before the fix: the
// failing page started a host-wide backoff at each of its retries (60 s,
// then 120 s, then 240 s), and the rest of the site waited behind it.
// Now the failing page costs the site only its own requests: every good
// page is fetched once, as early as without it, give or take the time of
// the bad page's own attempts; the host is never blocked.
func TestOneFailingURLDoesNotSlowItsSite(t *testing.T) {
	const good = 200
	base := crawlSite(t, good)
	withBad := crawlSite(t, good, "/broken")

	for i := range good {
		p := fmt.Sprintf("/p/%d", i)
		if base.requests[p] != 1 || withBad.requests[p] != 1 {
			t.Fatalf("%s requested %d and %d times, want once in each crawl", p, base.requests[p], withBad.requests[p])
		}
	}
	// The frontier's 5 leases (Options.MaxAttempts) of the Fetcher's 3
	// attempts each (Config.MaxRetries 2): the URL's own retry budget.
	const leases, attempts = 5, 3
	if n := withBad.requests["/broken"]; n != leases*attempts {
		t.Errorf("/broken requested %d times, want %d", n, leases*attempts)
	}
	if withBad.backoffs != 0 || withBad.blocked {
		t.Errorf("one failing URL started %d host-wide backoffs (blocked at the end: %v), want none",
			withBad.backoffs, withBad.blocked)
	}
	// Each lease of /broken takes the host for its three attempts: the
	// 1 s delay after each plus the Fetcher's retry waits (0.75 s and
	// 1.5 s with this Rand), under 4 s in all.
	slack := leases * 4 * time.Second
	if withBad.goodDone > base.goodDone+slack {
		t.Errorf("good pages done after %v with the failing page, %v without; want at most %v more",
			withBad.goodDone, base.goodDone, slack)
	}
	t.Logf("good pages done after %v without the failing page, %v with it", base.goodDone, withBad.goodDone)
}

// TestFailingSiteIsBackedOff is the other side: when every page fails, the
// host is taken to be in trouble after a few different URLs, and the error
// backoff spaces the rest.
func TestFailingSiteIsBackedOff(t *testing.T) {
	var bad []string
	for i := range 10 {
		bad = append(bad, fmt.Sprintf("/b/%d", i))
	}
	res := crawlSite(t, 0, bad...)
	if res.backoffs == 0 {
		t.Fatal("a host failing on every URL never backed off")
	}
	total := 0
	for p, n := range res.requests {
		if !strings.HasPrefix(p, "/b/") {
			t.Errorf("unexpected request for %s", p)
		}
		total += n
	}
	t.Logf("%d requests, %d host-wide backoffs", total, res.backoffs)
}
