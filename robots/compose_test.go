package robots_test

import (
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/robots"
)

func TestApplyCrawlDelay(t *testing.T) {
	p := fetch.NewPoliteness(fetch.PolitenessConfig{Delay: 10 * time.Millisecond, MaxCrawlDelay: 5 * time.Second})
	pol := robots.ParseString("User-agent: slowbot\nCrawl-delay: 2\n\nUser-agent: *\nCrawl-delay: 60\n")

	d, err := robots.ApplyCrawlDelay(p, "a.test", "slowbot", pol)
	if err != nil || d.Duration() != 2*time.Second {
		t.Fatalf("ApplyCrawlDelay = %v, %v; want 2s", d.Duration(), err)
	}
	if got := p.Delay("a.test"); got != 2*time.Second {
		t.Errorf("politeness gap after Crawl-delay 2 = %v", got)
	}
	// 60 s is over the politeness cap: applied capped, reported as written.
	d, err = robots.ApplyCrawlDelay(p, "b.test", "otherbot", pol)
	if err != nil || d.Duration() != time.Minute {
		t.Fatalf("ApplyCrawlDelay = %v, %v; want 1m as written", d.Duration(), err)
	}
	if got := p.Delay("b.test"); got != 5*time.Second {
		t.Errorf("politeness gap = %v, want the 5s cap", got)
	}
	// A policy without a delay removes an earlier one.
	if _, err := robots.ApplyCrawlDelay(p, "a.test", "slowbot", robots.ParseString("User-agent: *\nDisallow:\n")); err != nil {
		t.Fatal(err)
	}
	if got := p.Delay("a.test"); got != 10*time.Millisecond {
		t.Errorf("gap after the delay was removed = %v, want the base 10ms", got)
	}
}
