package distributed_test

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/distributed"
)

// parityAddress puts the crawltest hosts with an even number on one
// address and those with an odd number on another.
func parityAddress(host string) (netip.Addr, bool) {
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(host, "h"), ".test"))
	if err != nil {
		return netip.Addr{}, false
	}
	return netip.AddrFrom4([4]byte{127, 0, 0, byte(1 + n%2)}), true
}

// TestPolitenessByAddressAcrossNodes crawls a web of two servers (even and
// odd hosts) whose accounting is per server with two nodes: with the
// Crawler's PolitenessByAddress every server's hosts share one clock and
// one partition, so no two requests to a server come closer than the
// delay; with per-host clocks (the control) they do.
func TestPolitenessByAddressAcrossNodes(t *testing.T) {
	const delay = 50 * time.Millisecond
	crawl := func(t *testing.T, crawlID string, key func(*url.URL) string) *crawltest.Web {
		web := newWeb(t, crawltest.Config{Hosts: 12, PagesPerHost: 5, Seed: 9, Agent: testToken, NoTraps: true,
			MinGap: delay, CrawlDelay: 2 * delay,
			PolitenessGroup: func(host string) string { a, _ := parityAddress(host); return a.String() }})
		url := embeddedNATS(t)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		var wg sync.WaitGroup
		for _, id := range []string{"a", "b"} {
			node, err := distributed.NewNode(distributed.Config{
				NATSURL: url, NodeID: id, CrawlID: crawlID, Partitions: 8,
				MemberTTL: 2 * time.Second, AckWait: 4 * time.Second, RetryBase: 200 * time.Millisecond, HandoverHold: time.Second,
				Crawler: crawlkit.Config{
					UserAgent: testAgent, Seeds: web.Seeds(), Workers: 8, Delay: delay, MaxCrawlDelay: time.Second,
					DialContext: web.DialContext, AllowPrivate: loopback, RobotsRetries: -1, PolitenessKey: key,
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := node.Run(ctx); err != nil {
					t.Errorf("node %s: %v", id, err)
				}
			}()
		}
		wg.Wait()
		return web
	}
	byAddress := crawlkit.PolitenessByAddress(func(ctx context.Context, host string) ([]netip.Addr, error) {
		if a, ok := parityAddress(host); ok {
			return []netip.Addr{a}, nil
		}
		return nil, errors.New("no such host")
	})
	t.Run("by address", func(t *testing.T) {
		// Every page, no politeness violation on the servers' accounting.
		rep := checkCrawl(t, crawl(t, "byip", byAddress), 0.01)
		t.Logf("%d requests, %d politeness violations", rep.Requests, rep.PolitenessViolations())
	})
	t.Run("per host", func(t *testing.T) {
		rep := crawl(t, "perhost", nil).Report()
		t.Logf("%d requests, %d spacing and %d concurrency violations", rep.Requests, rep.SpacingViolations, rep.ConcurrencyViolations)
		if rep.PolitenessViolations() == 0 {
			t.Error("no politeness violation against servers shared by six hosts each; the accounting cannot tell")
		}
	})
}

// TestPolitenessFlag runs the crawlnode command with -politeness ip on a
// web whose every host is one server (they are all dialled at its
// address): one clock for all, no violation on the server's accounting.
func TestPolitenessFlag(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 6, PagesPerHost: 4, Seed: 5, Agent: testToken, NoTraps: true,
		MinGap: 10 * time.Millisecond, CrawlDelay: 20 * time.Millisecond, PolitenessGroup: func(string) string { return "one server" }})
	crawlWith(t, web, embeddedNATS(t), "flag", "-politeness", "ip")
}
