package robots_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/robots"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// robotsServer serves robots.txt with handler and counts its requests.
func robotsServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func policyAt(t *testing.T, c *robots.Cache, u string, now time.Time) *robots.Policy {
	t.Helper()
	p, err := c.PolicyAt(context.Background(), u, now)
	if err != nil {
		t.Fatalf("PolicyAt(%s): %v", u, err)
	}
	return p
}

// The status, redirect, backoff, fallback and TTL rules are cases in
// testdata/fetch (TestFetchRules); the tests here cover the HTTP client
// path and the Cache's machinery.

func TestCacheNetworkErrorIsUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close() // nothing listens there any more
	c := robots.NewCache(robots.Config{Client: &http.Client{}})
	p := policyAt(t, c, u+"/", t0)
	if p.Source() != robots.SourceUnreachable || p.FetchInfo().Err == "" || p.FetchInfo().Status != 0 {
		t.Fatalf("Source %v, FetchInfo %+v; want unreachable with an error", p.Source(), p.FetchInfo())
	}
	if d, _ := p.Allowed("bot", "/"); d.Allowed || d.Reason != robots.ReasonUnreachable {
		t.Errorf("decision %+v, want disallowed as unreachable", d)
	}
}

func TestCacheRedirects(t *testing.T) {
	for _, hops := range []int{0, 1, 5, 6, 8} {
		t.Run(fmt.Sprint(hops, " redirects"), func(t *testing.T) {
			srv, n := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
				var i int
				if r.URL.Path != "/robots.txt" {
					fmt.Sscanf(r.URL.Path, "/r%d", &i)
				}
				if i < hops {
					http.Redirect(w, r, fmt.Sprintf("/r%d", i+1), http.StatusMovedPermanently)
					return
				}
				io.WriteString(w, "User-agent: *\nDisallow: /x\n")
			})
			c := robots.NewCache(robots.Config{Client: srv.Client()})
			p := policyAt(t, c, srv.URL+"/", t0)
			if hops <= 5 {
				if p.Source() != robots.SourceFile {
					t.Fatalf("Source %v (%+v), want the file after %d redirects", p.Source(), p.FetchInfo(), hops)
				}
				if want := srv.URL + "/robots.txt"; hops > 0 {
					want = fmt.Sprintf("%s/r%d", srv.URL, hops)
					if p.FetchInfo().URL != want {
						t.Errorf("final URL %q, want %q", p.FetchInfo().URL, want)
					}
				}
				if n.Load() != int64(hops+1) {
					t.Errorf("%d requests, want %d", n.Load(), hops+1)
				}
				return
			}
			if p.Source() != robots.SourceUnreachable || !strings.Contains(p.FetchInfo().Err, "too many redirects") {
				t.Fatalf("Source %v, FetchInfo %+v; want unreachable after a 6th redirect", p.Source(), p.FetchInfo())
			}
			if n.Load() != 6 { // the original request and five followed redirects
				t.Errorf("%d requests, want 6", n.Load())
			}
		})
	}
}

func TestCacheRedirectConsultsClientPolicy(t *testing.T) {
	srv, _ := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
			return
		}
		io.WriteString(w, "User-agent: *\nDisallow: /\n")
	})
	refuse := errors.New("redirect refused by client policy")
	client := srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return refuse }
	p := policyAt(t, robots.NewCache(robots.Config{Client: client}), srv.URL, t0)
	if p.Source() != robots.SourceUnreachable || !strings.Contains(p.FetchInfo().Err, refuse.Error()) {
		t.Errorf("Source %v, FetchInfo %+v; want unreachable with the client's refusal", p.Source(), p.FetchInfo())
	}
}

func TestCacheHugeFile(t *testing.T) {
	var sent atomic.Int64
	srv, _ := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "User-agent: *\nDisallow: /a\n")
		line := "# " + strings.Repeat("padding ", 100) + "\n"
		for i := 0; i < (2<<20)/len(line); i++ { // 2 MiB of comments
			n, err := io.WriteString(w, line)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
		io.WriteString(w, "Disallow: /b\n")
	})
	p := policyAt(t, robots.NewCache(robots.Config{Client: srv.Client()}), srv.URL, t0)
	if !p.Truncated() || p.Size() > robots.DefaultMaxBytes {
		t.Fatalf("Truncated=%v Size=%d; want the first %d octets only", p.Truncated(), p.Size(), robots.DefaultMaxBytes)
	}
	if d, _ := p.Allowed("bot", "/a"); d.Allowed {
		t.Error("/a allowed; the rule at the start must apply")
	}
	if d, _ := p.Allowed("bot", "/b"); !d.Allowed {
		t.Error("/b disallowed; the rule after the cap must be ignored")
	}
}

func TestCacheSingleFlight(t *testing.T) {
	release := make(chan struct{})
	hit := make(chan struct{}, 1)
	srv, n := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case hit <- struct{}{}:
		default:
		}
		<-release
		io.WriteString(w, "User-agent: *\nDisallow: /x\n")
	})
	c := robots.NewCache(robots.Config{Client: srv.Client()})
	const callers = 100
	var started, done sync.WaitGroup
	started.Add(callers)
	done.Add(callers)
	results := make([]*robots.Policy, callers)
	errs := make([]error, callers)
	for i := 0; i < callers; i++ {
		go func() {
			defer done.Done()
			started.Done()
			results[i], errs[i] = c.PolicyAt(context.Background(), fmt.Sprintf("%s/page/%d", srv.URL, i), t0)
		}()
	}
	started.Wait()
	<-hit // one fetch is in flight; everyone else waits for it
	close(release)
	done.Wait()
	if got := n.Load(); got != 1 {
		t.Fatalf("%d fetches for %d concurrent callers, want exactly 1", got, callers)
	}
	for i := range results {
		if errs[i] != nil || results[i] != results[0] {
			t.Fatalf("caller %d: %v, policy %p vs %p", i, errs[i], results[i], results[0])
		}
	}
}

func TestCacheLeaderCancelled(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int64
	fetch := func(ctx context.Context, u string) (*http.Response, error) {
		if calls.Add(1) == 1 {
			<-ctx.Done() // the first fetch hangs until its caller gives up
			return nil, ctx.Err()
		}
		<-release
		return textResponse(200, "User-agent: *\nDisallow: /x\n"), nil
	}
	c := robots.NewCache(robots.Config{Fetch: fetch})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.PolicyAt(ctx, "https://example.test/", t0); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller: err = %v, want context.Canceled", err)
	}
	if c.Len() != 0 {
		t.Fatal("a cancelled fetch was cached")
	}
	close(release)
	p := policyAt(t, c, "https://example.test/", t0)
	if p.Source() != robots.SourceFile || calls.Load() != 2 {
		t.Errorf("Source %v after %d fetches; want the file from a second fetch", p.Source(), calls.Load())
	}
}

// textResponse builds a response as a FetchFunc would return it.
func textResponse(status int, body string) *http.Response {
	return &http.Response{
		StatusCode: status,
		Header:     http.Header{"Content-Type": {"text/plain"}},
		Body:       io.NopCloser(strings.NewReader(body)),
	}
}

func TestCacheFetchFuncAndLRU(t *testing.T) {
	var mu sync.Mutex
	fetched := map[string]int{}
	fetch := func(ctx context.Context, u string) (*http.Response, error) {
		mu.Lock()
		fetched[u]++
		mu.Unlock()
		if strings.HasPrefix(u, "https://moved.test/") {
			r := textResponse(http.StatusMovedPermanently, "")
			r.Header.Set("Location", "https://c.test/robots.txt")
			return r, nil
		}
		return textResponse(200, "User-agent: *\nDisallow: /private\n"), nil
	}
	c := robots.NewCache(robots.Config{Fetch: fetch, MaxEntries: 2})
	for _, u := range []string{"https://a.test/1", "https://b.test/1", "https://a.test/2", "https://moved.test/x"} {
		policyAt(t, c, u, t0)
	}
	// a was used after b, so b was evicted when moved.test arrived.
	if c.Len() != 2 {
		t.Fatalf("Len = %d, want 2", c.Len())
	}
	policyAt(t, c, "https://a.test/3", t0)
	policyAt(t, c, "https://b.test/3", t0)
	mu.Lock()
	defer mu.Unlock()
	want := map[string]int{
		"https://a.test/robots.txt": 1, "https://b.test/robots.txt": 2,
		"https://moved.test/robots.txt": 1, "https://c.test/robots.txt": 1,
	}
	for u, n := range want {
		if fetched[u] != n {
			t.Errorf("%s fetched %d times, want %d (all: %v)", u, fetched[u], n, fetched)
		}
	}
}

func TestCacheFetchFuncWithoutBody(t *testing.T) {
	c := robots.NewCache(robots.Config{Fetch: func(context.Context, string) (*http.Response, error) {
		return &http.Response{StatusCode: 200}, nil
	}})
	if p := policyAt(t, c, "https://a.test/", t0); p.Source() != robots.SourceFile {
		t.Errorf("Source %v, want an empty file", p.Source())
	}
	c = robots.NewCache(robots.Config{Fetch: func(context.Context, string) (*http.Response, error) { return nil, nil }})
	if p := policyAt(t, c, "https://a.test/", t0); p.Source() != robots.SourceUnreachable {
		t.Errorf("Source %v, want unreachable for a nil response", p.Source())
	}
}

type failingStore struct{ err error }

func (s failingStore) Get(context.Context, string) (robots.Record, bool, error) {
	return robots.Record{}, false, s.err
}
func (s failingStore) Put(context.Context, string, robots.Record) error { return s.err }

func TestCacheStore(t *testing.T) {
	srv, n := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "User-agent: *\nDisallow: /x\n")
	})
	store := robots.NewMemoryStore(0)
	c1 := robots.NewCache(robots.Config{Client: srv.Client(), Store: store})
	c2 := robots.NewCache(robots.Config{Client: srv.Client(), Store: store})
	policyAt(t, c1, srv.URL, t0)
	p := policyAt(t, c2, srv.URL, t0.Add(time.Hour))
	if n.Load() != 1 || store.Len() != 1 {
		t.Fatalf("%d fetches, %d stored; the second cache must use the stored file", n.Load(), store.Len())
	}
	if d, _ := p.Allowed("bot", "/x"); d.Allowed {
		t.Error("policy from the store allows /x")
	}
	// An expired stored record is fetched again...
	policyAt(t, c1, srv.URL, t0.Add(robots.DefaultTTL))
	if n.Load() != 2 {
		t.Errorf("%d fetches, want a refetch of the expired record", n.Load())
	}
	// ...and a cache whose own copy expired takes the refreshed record
	// from the store instead of fetching.
	policyAt(t, c2, srv.URL, t0.Add(robots.DefaultTTL+time.Hour+time.Minute))
	if n.Load() != 2 {
		t.Errorf("%d fetches, want the second cache to use the refreshed stored record", n.Load())
	}

	// Store errors are reported and do not change the decision.
	boom := errors.New("store down")
	var reported []error
	c3 := robots.NewCache(robots.Config{Client: srv.Client(), Store: failingStore{boom},
		OnStoreError: func(origin string, err error) { reported = append(reported, err) }})
	p = policyAt(t, c3, srv.URL, t0)
	if d, _ := p.Allowed("bot", "/x"); d.Allowed || p.Source() != robots.SourceFile {
		t.Errorf("with a failing store: %v %+v", p.Source(), d)
	}
	if len(reported) != 2 || !errors.Is(reported[0], boom) || !errors.Is(reported[1], boom) {
		t.Errorf("reported %v, want the Get and the Put error", reported)
	}
}

func TestCacheSendsUserAgent(t *testing.T) {
	got := make(chan string, 1)
	srv, _ := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		got <- r.UserAgent()
		w.WriteHeader(404)
	})
	policyAt(t, robots.NewCache(robots.Config{Client: srv.Client(), UserAgent: "ExampleBot/1.0 (+https://example.com/bot)"}), srv.URL, t0)
	if ua := <-got; ua != "ExampleBot/1.0 (+https://example.com/bot)" {
		t.Errorf("User-Agent %q", ua)
	}
}

func TestCacheAllowedUsesClock(t *testing.T) {
	srv, n := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "User-agent: *\nDisallow: /x\n")
	})
	now := t0
	c := robots.NewCache(robots.Config{Client: srv.Client(), Clock: func() time.Time { return now }})
	for _, tt := range []struct {
		u       string
		allowed bool
	}{{srv.URL + "/x", false}, {srv.URL + "/y", true}} {
		d, err := c.Allowed(context.Background(), "ExampleBot", tt.u)
		if err != nil || d.Allowed != tt.allowed {
			t.Errorf("Allowed(%s) = %+v, %v", tt.u, d, err)
		}
	}
	now = now.Add(robots.DefaultTTL)
	c.Allowed(context.Background(), "ExampleBot", srv.URL)
	if n.Load() != 2 {
		t.Errorf("%d fetches, want 2 (the clock moved past the TTL)", n.Load())
	}
	if _, err := c.Allowed(context.Background(), "Example Bot", srv.URL); !errors.Is(err, robots.ErrInvalidAgent) {
		t.Errorf("invalid token: err = %v", err)
	}
}

func TestOrigin(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://Example.COM/a?b", "https://example.com"},
		{"http://example.com:80/", "http://example.com"},
		{"https://example.com:443", "https://example.com"},
		{"http://example.com:8080/x", "http://example.com:8080"},
		{"HTTP://bücher.example/", "http://xn--bcher-kva.example"},
		{"http://[::1]:8080/", "http://[::1]:8080"},
		{"http://example.com./", "http://example.com"},
	}
	for _, tt := range tests {
		got, err := robots.Origin(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Origin(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"ftp://example.com/", "/relative", "http:///nohost", "::"} {
		if _, err := robots.Origin(bad); !errors.Is(err, robots.ErrUnsupportedURL) {
			t.Errorf("Origin(%q) error = %v, want ErrUnsupportedURL", bad, err)
		}
	}
	c := robots.NewCache(robots.Config{Fetch: func(context.Context, string) (*http.Response, error) {
		t.Error("fetched for an unsupported URL")
		return nil, errors.New("unreachable")
	}})
	if _, err := c.PolicyAt(context.Background(), "mailto:x@example.com", t0); !errors.Is(err, robots.ErrUnsupportedURL) {
		t.Errorf("PolicyAt(mailto:) error = %v", err)
	}
}

// hexRobots is a robots.txt of about size octets of short distinct rules,
// the costliest kind per octet to keep parsed.
func hexRobots(seed, size int) string {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := 0; b.Len() < size-32; i++ {
		fmt.Fprintf(&b, "Disallow:/%x-%x\n", seed, i)
	}
	return b.String()
}

// TestCacheMaxBytes fetches large robots.txt files of many hosts over
// loopback into a cache bounded to a few of them: the accounted bytes and
// the heap the cache retains stay within the bound, and every policy is
// still returned.
func TestCacheMaxBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("parses 24 files of 500 KiB")
	}
	const (
		hosts    = 24
		maxBytes = 24 << 20 // two or three such files
	)
	bodies := make([]string, hosts)
	for i := range bodies {
		bodies[i] = hexRobots(i, robots.DefaultMaxBytes)
	}
	srv, _ := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		var i int
		fmt.Sscanf(r.Host, "h%d.test", &i)
		io.WriteString(w, bodies[i])
	})
	// Every host name dials the one loopback server.
	tr := srv.Client().Transport.(*http.Transport).Clone()
	addr := srv.Listener.Addr().String()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	t.Cleanup(tr.CloseIdleConnections)
	c := robots.NewCache(robots.Config{Client: &http.Client{Transport: tr}, MaxBytes: maxBytes})
	before := robots.LiveHeap()
	for i := 0; i < hosts; i++ {
		p := policyAt(t, c, fmt.Sprintf("http://h%d.test/", i), t0)
		if d, _ := p.Allowed("bot", fmt.Sprintf("/%x-1", i)); d.Allowed {
			t.Fatalf("host %d: rule not applied: %+v", i, d)
		}
		if b := c.Bytes(); b > maxBytes {
			t.Fatalf("after host %d: %d bytes accounted, bound %d", i, b, maxBytes)
		}
	}
	grown := int64(robots.LiveHeap()) - int64(before)
	t.Logf("%d of %d hosts kept, %d bytes accounted, heap grew by %d", c.Len(), hosts, c.Bytes(), grown)
	if c.Len() < 2 || c.Len() >= hosts {
		t.Errorf("Len = %d, want a few of %d", c.Len(), hosts)
	}
	if grown > maxBytes {
		t.Errorf("heap grew by %d bytes, bound %d", grown, maxBytes)
	}
	if grown > c.Bytes() {
		t.Errorf("heap grew by %d bytes, more than the %d accounted", grown, c.Bytes())
	}
	runtime.KeepAlive(c)
}

// TestCacheMaxBytesLRU checks that the byte bound evicts least recently
// used entries first, and that an entry larger than the bound on its own
// is returned and kept alone.
func TestCacheMaxBytesLRU(t *testing.T) {
	var mu sync.Mutex
	fetched := map[string]int{}
	big := hexRobots(0, 64<<10)
	fetch := func(ctx context.Context, u string) (*http.Response, error) {
		mu.Lock()
		fetched[u]++
		mu.Unlock()
		if strings.HasPrefix(u, "https://huge.test/") {
			return textResponse(200, hexRobots(1, 256<<10)), nil
		}
		return textResponse(200, big), nil
	}
	one := robots.NewCache(robots.Config{Fetch: fetch})
	policyAt(t, one, "https://a.test/", t0)
	cost := one.Bytes()
	if cost < int64(len(big)) {
		t.Fatalf("a %d-octet file accounted as %d bytes", len(big), cost)
	}

	// Room for three entries.
	mu.Lock()
	clear(fetched)
	mu.Unlock()
	c := robots.NewCache(robots.Config{Fetch: fetch, MaxBytes: 3*cost + cost/2})
	// a was used after b, so b is evicted when d arrives; after a, c and d
	// are used, a is the least recently used and b evicts it.
	for _, h := range []string{"a", "b", "c", "a", "d", "a", "c", "d", "b", "c", "d", "b", "a"} {
		policyAt(t, c, "https://"+h+".test/", t0)
		if c.Len() > 3 || c.Bytes() > 3*cost+cost/2 {
			t.Fatalf("after %s: Len = %d, Bytes = %d; want at most 3, %d", h, c.Len(), c.Bytes(), 3*cost)
		}
	}
	mu.Lock()
	for h, n := range map[string]int{"a": 2, "b": 2, "c": 1, "d": 1} {
		if u := "https://" + h + ".test/robots.txt"; fetched[u] != n {
			t.Errorf("%s fetched %d times, want %d (all: %v)", u, fetched[u], n, fetched)
		}
	}
	mu.Unlock()

	// A file whose entry exceeds the bound is used and kept alone.
	p := policyAt(t, c, "https://huge.test/", t0)
	if d, _ := p.Allowed("bot", "/1-5"); d.Allowed {
		t.Errorf("huge file's rule not applied: %+v", d)
	}
	if c.Len() != 1 || c.Bytes() <= 3*cost+cost/2 {
		t.Errorf("Len = %d, Bytes = %d; want the huge entry alone", c.Len(), c.Bytes())
	}
	policyAt(t, c, "https://huge.test/", t0)
	policyAt(t, c, "https://a.test/", t0) // evicts huge
	if c.Len() != 1 || c.Bytes() != cost {
		t.Errorf("Len = %d, Bytes = %d; want a alone, %d", c.Len(), c.Bytes(), cost)
	}
	mu.Lock()
	if n := fetched["https://huge.test/robots.txt"]; n != 1 {
		t.Errorf("huge fetched %d times, want 1", n)
	}
	mu.Unlock()
}

// TestCacheKeepsGoodBodyForStore checks that the last good body, which a
// cache entry keeps only as its policy's source, is still written to the
// Store with an unreachable record and used as the fallback.
func TestCacheKeepsGoodBodyForStore(t *testing.T) {
	const body = "User-agent: *\nDisallow: /private\n"
	var fail atomic.Bool
	fetch := func(ctx context.Context, u string) (*http.Response, error) {
		if fail.Load() {
			return textResponse(503, ""), nil
		}
		return textResponse(200, body), nil
	}
	store := robots.NewMemoryStore(0)
	c := robots.NewCache(robots.Config{Fetch: fetch, Store: store})
	policyAt(t, c, "https://a.test/", t0)
	fail.Store(true)
	later := t0.Add(2 * robots.DefaultTTL)
	if d, _ := policyAt(t, c, "https://a.test/x", later).Allowed("bot", "/x"); d.Allowed {
		t.Fatalf("unreachable file allowed /x: %+v", d)
	}
	rec, ok, _ := store.Get(context.Background(), "https://a.test")
	if !ok || rec.GoodStatus != 200 || string(rec.GoodBody) != body || rec.Body != nil {
		t.Fatalf("stored record: ok=%v GoodStatus=%d GoodBody=%q Body=%q", ok, rec.GoodStatus, rec.GoodBody, rec.Body)
	}
	p := policyAt(t, c, "https://a.test/x", later.Add(robots.DefaultUnreachableLimit+time.Hour))
	if d, _ := p.Allowed("bot", "/private"); !p.FetchInfo().Fallback || d.Allowed {
		t.Errorf("fallback: %+v, /private %+v; want the last good file", p.FetchInfo(), d)
	}
	if d, _ := p.Allowed("bot", "/x"); !d.Allowed {
		t.Errorf("fallback disallows /x: %+v", d)
	}
}
