package sitemap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
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
	wantFail := []string{"/deeper.xml: depth", "/missing.xml: 404"}
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
