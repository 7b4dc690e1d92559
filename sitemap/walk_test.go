package sitemap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// siteServer serves fixed documents by path and records every request.
type siteServer struct {
	mu    sync.Mutex
	docs  map[string]string
	hits  []string
	agent string
}

func (s *siteServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits = append(s.hits, r.URL.Path)
	s.agent = r.UserAgent()
	body, ok := s.docs[r.URL.Path]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	io.WriteString(w, body)
}

func index(base string, children ...string) string {
	var b strings.Builder
	b.WriteString(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, c := range children {
		fmt.Fprintf(&b, "<sitemap><loc>%s%s</loc><lastmod>2024-01-0%dT00:00:00Z</lastmod></sitemap>", base, c, len(c)%9+1)
	}
	b.WriteString("</sitemapindex>")
	return b.String()
}

func TestWalkerFollowsIndexesWithLimits(t *testing.T) {
	srv := &siteServer{docs: map[string]string{}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	b := ts.URL
	srv.docs["/index.xml"] = index(b, "/a.xml", "/nested.xml", "/missing.xml", "/index.xml", "/a.xml")
	srv.docs["/a.xml"] = "<urlset><url><loc>" + b + "/p1</loc></url><url><loc>" + b + "/p2</loc></url></urlset>"
	srv.docs["/nested.xml"] = index(b, "/b.txt", "/deep.xml")
	srv.docs["/b.txt"] = b + "/p3\n"
	srv.docs["/deep.xml"] = index(b, "/deeper.xml")
	srv.docs["/deeper.xml"] = b + "/p4\n"

	var failures []string
	w := &Walker{
		Fetch:    HTTPFetch(ts.Client(), "TestBot/1.0"),
		MaxDepth: 2,
		OnError: func(u string, err error) {
			failures = append(failures, strings.TrimPrefix(u, b)+": "+errKind(err))
		},
	}
	var pages []string
	st, err := w.Walk(context.Background(), []Source{{URL: b + "/index.xml"}}, func(sm string, e Entry) error {
		pages = append(pages, strings.TrimPrefix(sm, b)+" "+strings.TrimPrefix(e.URL, b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantPages := []string{"/a.xml /p1", "/a.xml /p2", "/b.txt /p3"}
	if !equal(pages, wantPages) {
		t.Errorf("pages = %q, want %q", pages, wantPages)
	}
	sort.Strings(failures)
	// The child beyond MaxDepth is reported with the index listing it.
	wantFail := []string{"/deep.xml: depth", "/missing.xml: 404"}
	if !equal(failures, wantFail) {
		t.Errorf("failures = %q, want %q", failures, wantFail)
	}
	want := WalkStats{Fetched: 5, Failed: 1, Skipped: 1, Repeated: 2, Pages: 3}
	if st != want {
		t.Errorf("stats = %+v, want %+v", st, want)
	}
	if srv.agent != "TestBot/1.0" {
		t.Errorf("User-Agent = %q", srv.agent)
	}
	for _, h := range srv.hits {
		if h == "/deeper.xml" {
			t.Errorf("a sitemap beyond MaxDepth was fetched")
		}
	}
}

func errKind(err error) string {
	var se *StatusError
	switch {
	case errors.As(err, &se):
		return fmt.Sprint(se.StatusCode)
	case errors.Is(err, ErrTooDeep):
		return "depth"
	case errors.Is(err, ErrHostBudget):
		return "budget"
	}
	return err.Error()
}

func TestWalkerHostBudgetFollowAndStop(t *testing.T) {
	docs := map[string]string{}
	const base = "http://ex.test"
	docs["/index.xml"] = index(base, "/1.txt", "/2.txt", "/3.txt")
	for i := 1; i <= 3; i++ {
		docs[fmt.Sprintf("/%d.txt", i)] = fmt.Sprintf("%s/p%d\n%s/q%d\n", base, i, base, i)
	}
	var fetched []string
	fetch := func(ctx context.Context, u string) (io.ReadCloser, error) {
		fetched = append(fetched, strings.TrimPrefix(u, base))
		return io.NopCloser(strings.NewReader(docs[strings.TrimPrefix(u, base)])), nil
	}
	var skipped int
	w := &Walker{
		Fetch:              fetch,
		MaxSitemapsPerHost: 3,
		Follow:             func(c Entry) bool { return !strings.HasSuffix(c.URL, "/1.txt") },
		OnError: func(u string, err error) {
			if errors.Is(err, ErrHostBudget) {
				skipped++
			}
		},
	}
	var pages int
	st, err := w.Walk(context.Background(), []Source{{URL: base + "/index.xml"}}, func(string, Entry) error {
		pages++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// 1.txt is declined by Follow, so it uses no budget: index, 2.txt and
	// 3.txt fit in 3.
	if !equal(fetched, []string{"/index.xml", "/2.txt", "/3.txt"}) || pages != 4 || skipped != 0 {
		t.Errorf("fetched %q, %d pages, %d over budget; stats %+v", fetched, pages, skipped, st)
	}
	w.MaxSitemapsPerHost = 2
	fetched = nil
	if _, err := w.Walk(context.Background(), []Source{{URL: base + "/index.xml"}}, func(string, Entry) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if !equal(fetched, []string{"/index.xml", "/2.txt"}) || skipped != 1 {
		t.Errorf("with budget 2: fetched %q, %d over budget", fetched, skipped)
	}

	stop := errors.New("enough")
	calls := 0
	_, err = w.Walk(context.Background(), []Source{{URL: base + "/2.txt"}}, func(string, Entry) error {
		calls++
		return stop
	})
	if err != stop || calls != 1 {
		t.Errorf("callback error: got %v after %d calls", err, calls)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := w.Walk(ctx, []Source{{URL: base + "/2.txt"}}, func(string, Entry) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled walk: err = %v", err)
	}
}

func TestWalkerInheritsCrossSubmission(t *testing.T) {
	docs := map[string]string{
		"http://cdn.test/maps/index.xml": index("http://cdn.test", "/maps/a.txt", "/elsewhere/b.txt"),
		"http://cdn.test/maps/a.txt":     "http://www.ex.test/page\nhttp://cdn.test/maps/own\nhttp://other.test/x\n",
	}
	fetch := func(ctx context.Context, u string) (io.ReadCloser, error) {
		d, ok := docs[u]
		if !ok {
			return nil, &StatusError{URL: u, StatusCode: 404}
		}
		return io.NopCloser(strings.NewReader(d)), nil
	}
	var got []string
	srcs := FromRobots("http://www.ex.test/robots.txt", []string{"http://cdn.test/maps/index.xml"})
	_, err := (&Walker{Fetch: fetch}).Walk(context.Background(), srcs, func(_ string, e Entry) error {
		got = append(got, e.URL)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"http://www.ex.test/page", "http://cdn.test/maps/own"}; !equal(got, want) {
		t.Errorf("pages = %q, want %q", got, want)
	}
}

// genReader streams what next returns, until next returns nil, so that a
// test can feed the walker or parser a large document without holding it.
type genReader struct {
	next func() []byte
	buf  []byte
}

func (g *genReader) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		if g.buf = g.next(); g.buf == nil {
			return 0, io.EOF
		}
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

func (g *genReader) Close() error { return nil }

// liveHeap returns the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// An index listing many children beyond the budget must cost neither memory
// for each (the cycle-detection set keeps only what is fetched) nor a report
// for each.
func TestWalkerRemembersOnlyFetchedSitemaps(t *testing.T) {
	const base, children = "http://ex.test", 10000
	pad := strings.Repeat("p", 1900) // long child URLs, as a hostile index would use
	var fetched []string
	var growth int64
	before := liveHeap()
	fetch := func(ctx context.Context, u string) (io.ReadCloser, error) {
		fetched = append(fetched, u)
		if u != base+"/root.xml" {
			// The root index has been parsed: all it listed has been
			// enqueued or skipped.
			growth = int64(liveHeap()) - int64(before)
			return io.NopCloser(strings.NewReader("<urlset></urlset>")), nil
		}
		i := -1
		return &genReader{next: func() []byte {
			switch i++; {
			case i == 0:
				return []byte("<sitemapindex>")
			case i <= children:
				return fmt.Appendf(nil, "<sitemap><loc>%s/c%d-%s</loc></sitemap>", base, i, pad)
			case i == children+1:
				return []byte("</sitemapindex>")
			}
			return nil
		}}, nil
	}
	var reports []error
	var reported []string
	w := &Walker{Fetch: fetch, MaxSitemapsPerHost: 2, OnError: func(u string, err error) {
		reports = append(reports, err)
		reported = append(reported, u)
	}}
	st, err := w.Walk(context.Background(), []Source{{URL: base + "/root.xml"}}, func(string, Entry) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(fetched) != 2 || st.Fetched != 2 || st.Skipped != children-1 {
		t.Errorf("fetched %d, stats %+v; want 2 fetched, %d skipped", len(fetched), st, children-1)
	}
	if len(reports) != 1 || reported[0] != base+"/root.xml" || !errors.Is(reports[0], ErrHostBudget) || !strings.Contains(reports[0].Error(), fmt.Sprint(children-1)) {
		t.Errorf("%d reports, the first for %.40s: %v; want one for the index counting %d children over the host budget", len(reports), reported[0], reports[0], children-1)
	}
	// The skipped URLs alone are some 20 MiB.
	t.Logf("live heap growth while walking: %d KiB", growth>>10)
	if growth > 8<<20 {
		t.Errorf("live heap grew %d MiB: the skipped children are retained", growth>>20)
	}
}

// The per-host budget is per host name, whatever the port or scheme, and
// MaxSitemaps bounds the walk over all hosts.
func TestWalkerBudgetsPerHostNameAndWalk(t *testing.T) {
	fetches := map[string]int{}
	fetch := func(ctx context.Context, raw string) (io.ReadCloser, error) {
		u, _ := url.Parse(raw)
		fetches[hostOf(u)]++
		if u.Path != "/root.xml" {
			return io.NopCloser(strings.NewReader("<urlset></urlset>")), nil
		}
		var b strings.Builder
		b.WriteString("<sitemapindex>")
		for i := range 200 {
			fmt.Fprintf(&b, "<sitemap><loc>%s://%s/c%d.xml</loc></sitemap>", u.Scheme, u.Host, i)
		}
		b.WriteString("</sitemapindex>")
		return io.NopCloser(strings.NewReader(b.String())), nil
	}
	var srcs []Source
	for port := 8001; port <= 8020; port++ {
		srcs = append(srcs, Source{URL: fmt.Sprintf("http://h.test:%d/root.xml", port)})
	}
	srcs = append(srcs, Source{URL: "https://H.test./root.xml"})
	var limits []error
	w := &Walker{Fetch: fetch, MaxSitemapsPerHost: 50, OnError: func(_ string, err error) { limits = append(limits, err) }}
	st, err := w.Walk(context.Background(), srcs, func(string, Entry) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if fetches["h.test"] != 50 || st.Fetched != 50 {
		t.Errorf("one host on 21 origins: %d fetches, stats %+v; want 50", fetches["h.test"], st)
	}
	for _, err := range limits {
		if !errors.Is(err, ErrHostBudget) {
			t.Errorf("reported %v", err)
		}
	}

	clear(fetches)
	limits = nil
	srcs = srcs[:0]
	for _, h := range []string{"a", "b", "c", "d", "e"} {
		srcs = append(srcs, Source{URL: "http://" + h + ".test/root.xml"})
	}
	w.MaxSitemaps = 120
	st, err = w.Walk(context.Background(), srcs, func(string, Entry) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range fetches {
		total += n
	}
	if total != 120 || st.Fetched != 120 {
		t.Errorf("5 hosts of 50: %d fetches, stats %+v; want MaxSitemaps (120)", total, st)
	}
	walkLimit := false
	for _, err := range limits {
		walkLimit = walkLimit || errors.Is(err, ErrWalkBudget)
	}
	if !walkLimit {
		t.Errorf("no ErrWalkBudget among %v", limits)
	}
}

func TestFromRobotsCapsSources(t *testing.T) {
	var lines []string
	for i := range 500 {
		lines = append(lines, fmt.Sprintf("https://h%d.example/sitemap.xml", i))
	}
	got := FromRobots("https://ex.com/robots.txt", lines)
	if len(got) != MaxRobotsSitemaps || got[0].URL != lines[0] || got[len(got)-1].URL != lines[MaxRobotsSitemaps-1] {
		t.Errorf("FromRobots took %d of 500 sources, want the first %d", len(got), MaxRobotsSitemaps)
	}
}

// A server (or a FetchFunc's body) trickling its document must not hold the
// walk: the document fails with ErrDocumentTimeout and the walk goes on.
func TestWalkerDocumentTimeout(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ok.txt" {
			fmt.Fprintf(w, "http://%s/page\n", r.Host)
			return
		}
		io.WriteString(w, "<urlset>")
		for {
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := io.WriteString(w, " "); err != nil {
				return
			}
		}
	}))
	defer ts.Close()
	httpFetch := HTTPFetch(ts.Client(), "")
	for _, tc := range []struct {
		name  string
		fetch FetchFunc
	}{
		{"slow server", httpFetch},
		{"body ignoring ctx", func(ctx context.Context, u string) (io.ReadCloser, error) {
			if strings.HasSuffix(u, "/slow.xml") {
				// 3 s of white space: ten times the timeout, but an end,
				// so that a walker without the deadline fails the test
				// rather than hanging it.
				i := 0
				return &genReader{next: func() []byte {
					switch i++; {
					case i == 1:
						return []byte("<urlset>")
					case i <= 150:
						time.Sleep(20 * time.Millisecond)
						return []byte(" ")
					case i == 151:
						return []byte("</urlset>")
					}
					return nil
				}}, nil
			}
			return httpFetch(ctx, u)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var reports []error
			w := &Walker{Fetch: tc.fetch, DocumentTimeout: 300 * time.Millisecond, OnError: func(_ string, err error) {
				reports = append(reports, err)
			}}
			// The outer deadline only keeps a broken walker from hanging
			// the test.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			pages := 0
			st, err := w.Walk(ctx, []Source{{URL: ts.URL + "/slow.xml"}, {URL: ts.URL + "/ok.txt"}}, func(string, Entry) error {
				pages++
				return nil
			})
			if err != nil {
				t.Fatalf("Walk: %v", err)
			}
			if len(reports) != 1 || !errors.Is(reports[0], ErrDocumentTimeout) || st.Failed != 1 || pages != 1 {
				t.Errorf("reports %v, stats %+v, %d pages; want one ErrDocumentTimeout and the other sitemap read", reports, st, pages)
			}
		})
	}
}
