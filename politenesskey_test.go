package crawlkit_test

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
)

// parityAddress resolves the crawltest host hNNNN.test to 127.0.0.1 when
// NNNN is even and to 127.0.0.2 when it is odd: two servers, each behind
// half of the host names.
func parityAddress(host string) (netip.Addr, bool) {
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(host, "h"), ".test"))
	if err != nil {
		return netip.Addr{}, false
	}
	return netip.AddrFrom4([4]byte{127, 0, 0, byte(1 + n%2)}), true
}

// TestPolitenessByAddress crawls a web whose server accounts politeness per
// address (all even hosts are one server, all odd ones another) with a
// 60 ms delay: with PolitenessByAddress no two requests to one address come
// closer than that, nor overlap; with the default per-host clocks they do,
// which shows the accounting can see it.
func TestPolitenessByAddress(t *testing.T) {
	const delay = 60 * time.Millisecond
	crawl := func(t *testing.T, key func(*url.URL) string) crawltest.Report {
		web := newWeb(t, crawltest.Config{Hosts: 10, PagesPerHost: 6, Seed: 4, Agent: "crawlkit-test", NoTraps: true,
			MinGap: delay, CrawlDelay: 2 * delay,
			PolitenessGroup: func(host string) string { a, _ := parityAddress(host); return a.String() }})
		var log pageLog
		cfg := crawlConfig(web, &log)
		cfg.Delay = delay
		cfg.PolitenessKey = key
		c, err := crawlkit.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		rep := web.Report()
		truth := web.TruthFor("crawlkit-test", 0)
		if missing := truth.Missing(log.urls()); len(missing) > 0 {
			t.Errorf("%d of %d pages not fetched, e.g. %v; not fetched by reason: %v", len(missing), len(truth.Unique()), missing[0], c.Stats().URLs.NotFetched)
		}
		return rep
	}
	var lookups atomic.Int64
	byAddress := crawlkit.PolitenessByAddress(func(ctx context.Context, host string) ([]netip.Addr, error) {
		lookups.Add(1)
		if a, ok := parityAddress(host); ok {
			return []netip.Addr{netip.MustParseAddr("127.0.0.9"), a}, nil
		}
		return nil, errors.New("no such host")
	})
	rep := crawl(t, byAddress)
	if v := rep.PolitenessViolations(); v != 0 {
		t.Errorf("by address: %d politeness violations (spacing %d, concurrency %d)", v, rep.SpacingViolations, rep.ConcurrencyViolations)
	}
	for name, h := range rep.Hosts {
		if h.Gaps > 0 && h.MinGap < delay {
			t.Errorf("by address: host %s: a request %v after its server's last one", name, h.MinGap)
		}
	}
	if n := lookups.Load(); n != 10 {
		t.Errorf("by address: %d lookups for 10 hosts, want one each", n)
	}

	t.Logf("by address: %d requests, 0 politeness violations", rep.Requests)
	rep = crawl(t, nil)
	t.Logf("per host: %d requests, %d spacing and %d concurrency violations", rep.Requests, rep.SpacingViolations, rep.ConcurrencyViolations)
	if rep.PolitenessViolations() == 0 {
		t.Error("per host: no politeness violation against servers shared by five hosts each; the accounting cannot tell")
	}
}

// TestPolitenessByAddressKeys checks the keys: the lowest address, written
// like an address host, the address of an IP URL itself, the host when the
// lookup fails, and the first answer kept.
func TestPolitenessByAddressKeys(t *testing.T) {
	answers := map[string][]netip.Addr{
		"a.test": {netip.MustParseAddr("192.0.2.7"), netip.MustParseAddr("192.0.2.3")},
		"b.test": {netip.MustParseAddr("2001:db8::2"), netip.MustParseAddr("::ffff:192.0.2.3")},
		"c.test": {netip.MustParseAddr("2001:db8::1")},
	}
	key := crawlkit.PolitenessByAddress(func(ctx context.Context, host string) ([]netip.Addr, error) {
		a, ok := answers[host]
		if !ok {
			return nil, errors.New("no such host")
		}
		return a, nil
	})
	for raw, want := range map[string]string{
		"http://a.test/x":          "192.0.2.3",
		"https://b.test:8443/":     "192.0.2.3",
		"http://c.test/":           "[2001:db8::1]",
		"http://192.0.2.3/":        "192.0.2.3",
		"http://[2001:db8::1]:81/": "[2001:db8::1]",
		"http://nowhere.test/":     "nowhere.test",
	} {
		u, _ := url.Parse(raw)
		if got := key(u); got != want {
			t.Errorf("%s: key %q, want %q", raw, got, want)
		}
	}
	answers["a.test"] = []netip.Addr{netip.MustParseAddr("192.0.2.1")}
	if got := key(&url.URL{Scheme: "http", Host: "a.test"}); got != "192.0.2.3" {
		t.Errorf("a.test after its answer changed: %q, want the first answer's 192.0.2.3", got)
	}
}

// TestPolitenessByDomain checks the registrable-domain keys.
func TestPolitenessByDomain(t *testing.T) {
	for raw, want := range map[string]string{
		"http://www.example.co.uk/":  "example.co.uk",
		"http://news.example.co.uk/": "example.co.uk",
		"http://EXAMPLE.com:8080/":   "example.com",
		"http://alice.github.io/":    "alice.github.io",
		"http://localhost:8080/":     "localhost:8080",
		"http://192.0.2.1/":          "192.0.2.1",
	} {
		u, _ := url.Parse(raw)
		if got := crawlkit.PolitenessByDomain(u); got != want {
			t.Errorf("%s: key %q, want %q", raw, got, want)
		}
	}
}

// A PolitenessKey that panics, or answers "", keys those URLs by their host:
// the crawl goes on, fetches every page, and says so once.
func TestPolitenessKeyPanicsAreRecovered(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 3, PagesPerHost: 8, Seed: 9, Agent: "crawlkit-test", NoTraps: true})
	var log pageLog
	var out strings.Builder
	cfg := crawlConfig(web, &log)
	cfg.Logger = newTextLogger(&out)
	var calls atomic.Int64
	cfg.PolitenessKey = func(u *url.URL) string {
		switch calls.Add(1) % 3 {
		case 0:
			panic("no key for " + u.Path)
		case 1:
			return ""
		}
		return "shared"
	}
	c, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if missing := web.TruthFor("crawlkit-test", 0).Missing(log.urls()); len(missing) > 0 {
		t.Errorf("%d pages not fetched, e.g. %v", len(missing), missing[0])
	}
	if n := strings.Count(out.String(), "PolitenessKey panicked"); n != 1 {
		t.Errorf("the log says %d times that PolitenessKey panicked, want once", n)
	}
}
