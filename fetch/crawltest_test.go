package fetch_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/fetch"
)

var loopbackOnly = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

func newWeb(t *testing.T, cfg crawltest.Config) *crawltest.Web {
	t.Helper()
	w, err := crawltest.NewWeb(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

// TestHostileEndpoints fetches every crawltest hostile endpoint and checks
// that each ends in the documented, typed outcome. Each fetch runs under a
// context deadline far above the Fetcher's own limits, so a Fetcher that
// failed to stop would show up as a context error, not as the expected one.
func TestHostileEndpoints(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 1, DripInterval: 50 * time.Millisecond, BombSize: 64 << 20})
	newFetcher := func(mod func(*fetch.Config)) *fetch.Fetcher {
		cfg := fetch.Config{
			UserAgent:        "crawlkit-test/1.0",
			DialContext:      web.DialContext,
			AllowCIDRs:       loopbackOnly,
			PolitenessConfig: fetch.PolitenessConfig{Delay: -1, DelayFactor: -1},
			MaxRetries:       -1,
		}
		if mod != nil {
			mod(&cfg)
		}
		f, err := fetch.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	isErr := func(target error) func(*testing.T, *fetch.Response, error) {
		return func(t *testing.T, _ *fetch.Response, err error) {
			if !errors.Is(err, target) {
				t.Errorf("err = %v, want %v", err, target)
			}
		}
	}
	cases := []struct {
		kind  string
		mod   func(*fetch.Config)
		check func(*testing.T, *fetch.Response, error)
	}{
		// A short rate window for the drip alone: it sends 20 bytes a second,
		// far below the minimum rate however loaded the machine, while a
		// fast endpoint's transfer must not fail when a loaded machine
		// stalls the reader for a moment.
		{crawltest.HostileSlowDrip, func(c *fetch.Config) { c.TransferRateWindow = 300 * time.Millisecond }, isErr(fetch.ErrTimeout)},
		{crawltest.HostileStall, func(c *fetch.Config) { c.HeaderTimeout = 500 * time.Millisecond }, isErr(fetch.ErrTimeout)},
		{crawltest.HostileEndless, func(c *fetch.Config) { c.OnTooLarge = fetch.Fail }, isErr(fetch.ErrBodyTooLarge)},
		{crawltest.HostileEndless, nil, func(t *testing.T, r *fetch.Response, err error) {
			if err != nil {
				t.Fatalf("truncate mode: err %v", err)
			}
			if !r.Truncated || int64(len(r.Body)) != 10<<20 {
				t.Errorf("truncate mode: truncated %v, %d bytes", r.Truncated, len(r.Body))
			}
		}},
		{crawltest.HostileGzipBomb, nil, isErr(fetch.ErrDecompressionBomb)},
		{crawltest.HostileBrotliBomb, nil, isErr(fetch.ErrDecompressionBomb)},
		{crawltest.HostileZstdBomb, nil, isErr(fetch.ErrDecompressionBomb)},
		{crawltest.HostileRedirectLoop, nil, isErr(fetch.ErrTooManyRedirects)},
		{crawltest.HostilePrivateRedirect, nil, isErr(fetch.ErrBlockedAddress)},
		{crawltest.HostileMetadataRedirect, nil, isErr(fetch.ErrBlockedAddress)},
		{crawltest.HostileWrongLength, nil, isErr(io.ErrUnexpectedEOF)},
		{crawltest.HostileBadCharset, nil, func(t *testing.T, r *fetch.Response, err error) {
			// Not the fetcher's to repair: reported as declared, for the
			// extractor's charset handling to deal with.
			if err != nil || r.ContentType != "text/html" || r.Charset != "x-no-such-charset" {
				t.Errorf("err %v, %+v", err, r)
			}
		}},
		{crawltest.HostileBinary, nil, func(t *testing.T, r *fetch.Response, err error) {
			if err != nil {
				t.Fatalf("err %v", err)
			}
			if r.ContentType != "image/png" || !r.Sniffed || r.DeclaredType != "text/html" {
				t.Errorf("type %q sniffed %v declared %q", r.ContentType, r.Sniffed, r.DeclaredType)
			}
		}},
		{crawltest.HostileHugeHeaders, nil, isErr(fetch.ErrHeadersTooLarge)},
		{crawltest.HostileTooManyRequests, nil, func(t *testing.T, r *fetch.Response, err error) {
			if err != nil || r.StatusCode != 429 {
				t.Errorf("err %v, %+v", err, r)
			}
		}},
		{crawltest.HostileUnavailable, nil, func(t *testing.T, r *fetch.Response, err error) {
			if err != nil || r.StatusCode != 503 {
				t.Errorf("err %v, %+v", err, r)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			f := newFetcher(c.mod)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			resp, err := f.Fetch(ctx, web.HostileURL(c.kind))
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("fetch outlived its budget: %v", err)
			}
			c.check(t, resp, err)
		})
	}
}

// TestHostileRetryAfterBlocksHost checks that the 429 and 503 endpoints'
// Retry-After headers (120 s, and an HTTP date one hour ahead) block the
// host in the Fetcher's politeness, measured on the injected clock, and that
// nothing more is sent there meanwhile.
func TestHostileRetryAfterBlocksHost(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	clock := &stepClock{now: now}
	web := newWeb(t, crawltest.Config{Hosts: 1, Now: clock.Now})
	for _, c := range []struct {
		kind string
		wait time.Duration
	}{{crawltest.HostileTooManyRequests, 120 * time.Second}, {crawltest.HostileUnavailable, time.Hour}} {
		cfg := fetch.Config{
			UserAgent: "crawlkit-test/1.0", DialContext: web.DialContext, AllowCIDRs: loopbackOnly,
			PolitenessConfig: fetch.PolitenessConfig{DelayFactor: -1},
		}
		fetch.UseClock(&cfg, clock)
		f, err := fetch.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		start := clock.Now()
		if _, err := f.Fetch(context.Background(), web.HostileURL(c.kind)); err != nil {
			t.Fatal(err)
		}
		before := web.Report().Hosts[crawltest.HostileHost].Requests
		ready := f.Politeness().ReadyAt(crawltest.HostileHost, start)
		if got := ready.Sub(start); got != c.wait {
			t.Errorf("%s: host ready after %v, want %v", c.kind, got, c.wait)
		}
		_, err = f.Fetch(context.Background(), web.HostileURL(c.kind))
		if !errors.Is(err, fetch.ErrHostBlocked) {
			t.Errorf("%s: second fetch err = %v, want ErrHostBlocked", c.kind, err)
		}
		if after := web.Report().Hosts[crawltest.HostileHost].Requests; after != before {
			t.Errorf("%s: %d requests sent to a blocked host", c.kind, after-before)
		}
	}
}

// stepClock is a clock for fetch.UseClock whose After advances time at
// once.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// TestBombsBoundedMemory measures the heap allocated while refusing each
// compression bomb (64 MiB decoded).
func TestBombsBoundedMemory(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 1, BombSize: 64 << 20})
	f, err := fetch.New(fetch.Config{
		UserAgent: "crawlkit-test/1.0", DialContext: web.DialContext, AllowCIDRs: loopbackOnly,
		PolitenessConfig: fetch.PolitenessConfig{Delay: -1, DelayFactor: -1}, MaxRetries: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Limits per coding: gzip and zstd decoders are small; brotli's ring
	// buffer is as large as the stream's window (16 MiB for lgwin 24, the
	// largest RFC 7932 allows), which bounds it too.
	for _, c := range []struct {
		kind  string
		limit uint64
	}{{crawltest.HostileGzipBomb, 8 << 20}, {crawltest.HostileZstdBomb, 16 << 20}, {crawltest.HostileBrotliBomb, 40 << 20}} {
		// Warm up: the server builds its bomb on first use.
		if _, err := f.Fetch(context.Background(), web.HostileURL(c.kind)); !errors.Is(err, fetch.ErrDecompressionBomb) {
			t.Fatalf("%s: %v", c.kind, err)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := f.Fetch(context.Background(), web.HostileURL(c.kind))
		runtime.ReadMemStats(&after)
		if !errors.Is(err, fetch.ErrDecompressionBomb) {
			t.Fatalf("%s: %v", c.kind, err)
		}
		got := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d KiB allocated (client and server) refusing 64 MiB", c.kind, got>>10)
		if got > c.limit {
			t.Errorf("%s: allocated %d MiB, want < %d MiB", c.kind, got>>20, c.limit>>20)
		}
	}
}

// TestPolitenessAgainstCrawltestAccounting runs 50 workers over 5 hosts of
// the synthetic web and reads the server's own politeness accounting: no
// request may come sooner than MinGap after the previous one to its host
// ended, and none may overlap another to the same host. A control run
// without politeness shows that the accounting does catch violations.
func TestPolitenessAgainstCrawltestAccounting(t *testing.T) {
	const gap = 20 * time.Millisecond
	run := func(web *crawltest.Web, pol fetch.PolitenessConfig) crawltest.Report {
		f, err := fetch.New(fetch.Config{
			UserAgent: "crawlkit-test/1.0", DialContext: web.DialContext, AllowCIDRs: loopbackOnly,
			PolitenessConfig: pol,
		})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		jobs := make(chan string)
		var wg sync.WaitGroup
		for range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for u := range jobs {
					if resp, err := f.Fetch(context.Background(), u); err != nil {
						t.Error(err)
					} else if resp.StatusCode != http.StatusOK {
						t.Errorf("%s: status %d", u, resp.StatusCode)
					}
				}
			}()
		}
		for range 6 {
			for _, seed := range web.Seeds() {
				jobs <- seed
			}
		}
		close(jobs)
		wg.Wait()
		return web.Report()
	}
	cfg := crawltest.Config{Hosts: 5, MinGap: gap, MaxPerHost: 1, RobotsVariants: []crawltest.RobotsVariant{crawltest.RobotsMissing}}
	rep := run(newWeb(t, cfg), fetch.PolitenessConfig{Delay: gap, DelayFactor: -1})
	if rep.Requests != 30 || rep.SpacingViolations != 0 || rep.ConcurrencyViolations != 0 {
		t.Fatalf("requests %d, spacing violations %d, concurrency violations %d; want 30, 0, 0",
			rep.Requests, rep.SpacingViolations, rep.ConcurrencyViolations)
	}

	cfg.MinGap = time.Minute
	rep = run(newWeb(t, cfg), fetch.PolitenessConfig{Delay: -1, DelayFactor: -1, MaxConcurrent: 50})
	if rep.PolitenessViolations() == 0 {
		t.Fatal("control without politeness shows no violations: the accounting cannot be trusted")
	}
}
