package crawlkit_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/archive/warc"
	"github.com/crawlkit/crawlkit/usage"
)

// usageSite serves a site whose pages say different things about AI
// training: in robots.txt, in headers, in meta elements and in
// /.well-known/tdmrep.json.
func usageSite(t *testing.T) *site {
	return serveSite(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nAllow: /\nContent-Usage: train-ai=y\nContent-Usage: /closed/ train-ai=n\nContent-Signal: search=yes, ai-input=yes\n")
		case "/.well-known/tdmrep.json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `[{"location": "/open/tdm", "tdm-reservation": 1, "tdm-policy": "https://policy.test/1"}]`)
		case "/":
			writeHTML(w, `<html><body><a href="/open/a.html">a</a> <a href="/closed/page.html">c1</a> <a href="/closed/other.html">c2</a>
<a href="/open/header.html">h</a> <a href="/open/meta.html">m</a> <a href="/open/tdm.html">t</a> <a href="/open/tdm-ok.html">t2</a></body></html>`)
		case "/open/a.html", "/closed/page.html", "/closed/other.html", "/open/behind-header.html":
			writeHTML(w, `<html><body><p>`+r.URL.Path+`</p></body></html>`)
		case "/open/header.html":
			w.Header().Set("Content-Usage", "train-ai=n")
			writeHTML(w, `<html><body><a href="/open/behind-header.html">next</a></body></html>`)
		case "/open/meta.html":
			writeHTML(w, `<html><head><meta name="robots" content="noai, noimageai"></head><body>meta</body></html>`)
		case "/open/tdm.html":
			writeHTML(w, `<html><body>reserved by the file</body></html>`)
		case "/open/tdm-ok.html":
			w.Header().Set("tdm-reservation", "0")
			writeHTML(w, `<html><body>the header overrides the file</body></html>`)
		default:
			http.NotFound(w, r)
		}
	})
}

// logCounter counts log records by message.
type logCounter struct {
	mu   sync.Mutex
	msgs map[string]int
}

func (l *logCounter) Enabled(context.Context, slog.Level) bool { return true }
func (l *logCounter) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs[r.Level.String()+" "+r.Message]++
	return nil
}
func (l *logCounter) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logCounter) WithGroup(string) slog.Handler      { return l }

// pageSink hands every page it is written to a function.
type pageSink func(p *crawlkit.Page)

func (f pageSink) Write(_ context.Context, p *crawlkit.Page) error { f(p); return nil }
func (pageSink) Close() error                                      { return nil }

// usageCrawl crawls s with the usage policy up and returns the pages handed
// to the Handler and to the Sink, by path, and the crawl's Stats.
func usageCrawl(t *testing.T, s *site, up crawlkit.UsagePolicy, mutate func(*crawlkit.Config)) (handled, sunk map[string]*crawlkit.Page, st crawlkit.Stats) {
	t.Helper()
	var mu sync.Mutex
	handled, sunk = map[string]*crawlkit.Page{}, map[string]*crawlkit.Page{}
	cfg := crawlkit.Config{
		UserAgent:    testAgent,
		Seeds:        []string{s.srv.URL + "/"},
		Delay:        time.Millisecond,
		AllowPrivate: loopback,
		Usage:        up,
		Handler: func(_ context.Context, p *crawlkit.Page) error {
			mu.Lock()
			handled[strings.TrimPrefix(p.URL, s.srv.URL)] = p
			mu.Unlock()
			return nil
		},
		Sink: pageSink(func(p *crawlkit.Page) {
			mu.Lock()
			sunk[strings.TrimPrefix(p.URL, s.srv.URL)] = p
			mu.Unlock()
		}),
	}
	if mutate != nil {
		mutate(&cfg)
	}
	c, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return handled, sunk, c.Stats()
}

// TestUsageSkip crawls usageSite with UsageSkip for AI training: URLs
// robots.txt reserves are not fetched, pages whose header, meta or
// tdmrep.json reserve them are fetched but withheld from the Handler and
// Sink while their links are followed, and every case is counted.
func TestUsageSkip(t *testing.T) {
	s := usageSite(t)
	logs := &logCounter{msgs: map[string]int{}}
	got, sunk, st := usageCrawl(t, s, crawlkit.UsagePolicy{Action: crawlkit.UsageSkip, Purpose: usage.AITraining, TDMRep: true},
		func(c *crawlkit.Config) { c.Logger = slog.New(logs) })
	want := "/ /open/a.html /open/behind-header.html /open/tdm-ok.html"
	if g := strings.Join(keys(got), " "); g != want {
		t.Errorf("handed on %s, want %s", g, want)
	}
	if g := strings.Join(keys(sunk), " "); g != want {
		t.Errorf("sink got %s, want %s", g, want)
	}
	for _, path := range []string{"/closed/page.html", "/closed/other.html"} {
		if n := s.hit(path); n != 0 {
			t.Errorf("%s requested %d times", path, n)
		}
	}
	for _, path := range []string{"/open/header.html", "/open/meta.html", "/open/tdm.html", "/open/behind-header.html"} {
		if n := s.hit(path); n != 1 {
			t.Errorf("%s requested %d times, want 1", path, n)
		}
	}
	if n := s.hit("/.well-known/tdmrep.json"); n != 1 {
		t.Errorf("tdmrep.json requested %d times, want 1", n)
	}
	home := got["/"]
	if home.Usage.AITraining != usage.Allowed || home.Usage.Search != usage.Allowed || home.Usage.AIInput != usage.Allowed {
		t.Errorf("home page usage %+v", home.Usage)
	}
	if ok := got["/open/tdm-ok.html"]; ok.Usage.AITraining != usage.Allowed || ok.Usage.TDMPolicy != "" {
		t.Errorf("the header's tdm-reservation 0 did not override the file: %+v", ok.Usage)
	}
	if st.URLs.NotFetched[crawlkit.ReasonUsage] != 2 {
		t.Errorf("NotFetched %v, want usage: 2", st.URLs.NotFetched)
	}
	if st.Usage != (crawlkit.UsageStats{Disallowed: 3, Withheld: 3, TDMRepFetches: 1}) {
		t.Errorf("Stats.Usage %+v", st.Usage)
	}
	logs.mu.Lock()
	defer logs.mu.Unlock()
	if n := logs.msgs["INFO URLs not fetched: robots.txt usage preferences disallow Config.Usage.Purpose"]; n != 1 {
		t.Errorf("the host's usage rule logged %d times at Info, want once: %v", n, logs.msgs)
	}
	if n := logs.msgs["DEBUG page withheld from the Handler and Sink"]; n != 3 {
		t.Errorf("withheld pages logged %d times at Debug, want 3", n)
	}
	if n := logs.msgs["DEBUG not fetched"]; n < 2 {
		t.Errorf("URLs not fetched logged %d times at Debug, want 2 or more", n)
	}
}

// TestUsageMark crawls usageSite with UsageMark: every page is fetched and
// handed on with its usage preferences, which the JSONL sink records on
// request and the WARC sink as a metadata record beside the response.
func TestUsageMark(t *testing.T) {
	s := usageSite(t)
	warcDir, jsonlDir := t.TempDir(), t.TempDir()
	ws, err := crawlkit.NewWARCSink(warc.Config{Dir: warcDir})
	if err != nil {
		t.Fatal(err)
	}
	js, err := crawlkit.NewJSONLSink(crawlkit.JSONLConfig{Dir: jsonlDir, Usage: true})
	if err != nil {
		t.Fatal(err)
	}
	got, _, st := usageCrawl(t, s, crawlkit.UsagePolicy{Action: crawlkit.UsageMark, Purpose: usage.AITraining, TDMRep: true},
		func(c *crawlkit.Config) { c.Sink = multiSink{ws, js} })
	want := "/ /closed/other.html /closed/page.html /open/a.html /open/behind-header.html /open/header.html /open/meta.html /open/tdm-ok.html /open/tdm.html"
	if g := strings.Join(keys(got), " "); g != want {
		t.Errorf("handed on %s, want %s", g, want)
	}
	for path, v := range map[string]usage.Verdict{
		"/": usage.Allowed, "/closed/page.html": usage.Disallowed, "/open/header.html": usage.Disallowed,
		"/open/meta.html": usage.Disallowed, "/open/tdm.html": usage.Disallowed, "/open/tdm-ok.html": usage.Allowed,
	} {
		if p := got[path]; p == nil || p.Usage.AITraining != v {
			t.Errorf("%s: train-ai %v, want %v", path, p.Usage.AITraining, v)
		}
	}
	if m := got["/open/meta.html"].Usage; !m.NoImageAI || m.Search != usage.Allowed {
		t.Errorf("meta page usage %+v", m)
	}
	if p := got["/open/tdm.html"].Usage; p.TDMPolicy != "https://policy.test/1" || p.Search != usage.Allowed {
		t.Errorf("tdm page usage %+v", p)
	}
	if st.Usage != (crawlkit.UsageStats{Disallowed: 5, TDMRepFetches: 1}) || st.URLs.NotFetched[crawlkit.ReasonUsage] != 0 {
		t.Errorf("Stats.Usage %+v, NotFetched %v", st.Usage, st.URLs.NotFetched)
	}

	// The JSONL record of a page robots.txt reserves.
	files, _ := filepath.Glob(filepath.Join(jsonlDir, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("JSONL files %v", files)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var closed map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if rec["url"] == s.srv.URL+"/closed/page.html" {
			closed = rec
		}
	}
	u, _ := closed["usage"].(map[string]any)
	if u["train-ai"] != "disallowed" || u["search"] != "allowed" || u["ai-input"] != "allowed" {
		t.Errorf("JSONL usage %v", closed["usage"])
	}
	if srcs, _ := u["sources"].([]any); len(srcs) != 2 {
		t.Errorf("JSONL usage sources %v", u["sources"])
	}

	// The WARC metadata record of the same page, concurrent to its
	// response.
	responseID := map[string]string{}
	var metaFor, metaTo string
	var metaBody []byte
	readWARCHeaders(t, warcDir, func(h map[string]string, content []byte) {
		target := strings.TrimPrefix(h["warc-target-uri"], s.srv.URL)
		switch h["warc-type"] {
		case "response":
			responseID[target] = h["warc-record-id"]
		case "metadata":
			if target == "/closed/page.html" {
				metaFor, metaTo, metaBody = target, h["warc-concurrent-to"], content
				if h["content-type"] != "application/json" {
					t.Errorf("metadata Content-Type %q", h["content-type"])
				}
			}
		}
	})
	if metaFor == "" || metaTo != responseID[metaFor] {
		t.Fatalf("metadata record for %q concurrent to %q; response %q", metaFor, metaTo, responseID["/closed/page.html"])
	}
	var md struct{ Usage usage.Signals }
	if err := json.Unmarshal(metaBody, &md); err != nil || md.Usage.AITraining != usage.Disallowed {
		t.Errorf("metadata block %s: %v", metaBody, err)
	}
}

// TestUsageOff checks that the zero UsagePolicy changes nothing: no
// preferences read, no tdmrep.json fetched, no metadata record written.
func TestUsageOff(t *testing.T) {
	s := usageSite(t)
	warcDir := t.TempDir()
	ws, err := crawlkit.NewWARCSink(warc.Config{Dir: warcDir})
	if err != nil {
		t.Fatal(err)
	}
	got, _, st := usageCrawl(t, s, crawlkit.UsagePolicy{TDMRep: true, Purpose: usage.AITraining}, func(c *crawlkit.Config) { c.Sink = ws })
	if len(got) != 9 {
		t.Errorf("handed on %v", keys(got))
	}
	for path, p := range got {
		if !p.Usage.IsZero() {
			t.Errorf("%s: Usage %+v", path, p.Usage)
		}
	}
	if n := s.hit("/.well-known/tdmrep.json"); n != 0 || st.Usage != (crawlkit.UsageStats{}) {
		t.Errorf("tdmrep.json requested %d times; Stats.Usage %+v", n, st.Usage)
	}
	readWARCHeaders(t, warcDir, func(h map[string]string, _ []byte) {
		if h["warc-type"] == "metadata" {
			t.Errorf("metadata record for %s", h["warc-target-uri"])
		}
	})
}

// multiSink writes to each sink in turn.
type multiSink []crawlkit.Sink

func (m multiSink) Write(ctx context.Context, p *crawlkit.Page) error {
	for _, s := range m {
		if err := s.Write(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

func (m multiSink) Close() error {
	for _, s := range m {
		if err := s.Close(); err != nil {
			return err
		}
	}
	return nil
}

// readWARCHeaders calls fn with the lower-cased WARC header fields and the
// block of every record in dir.
func readWARCHeaders(t *testing.T, dir string, fn func(h map[string]string, content []byte)) {
	t.Helper()
	for _, r := range readWARCRecords(t, dir) {
		h := map[string]string{}
		for k, v := range r.fields {
			h[strings.ToLower(k)] = v[0]
		}
		fn(h, r.block)
	}
}

// TestUsageConfig checks that New refuses a UsagePolicy it cannot apply.
func TestUsageConfig(t *testing.T) {
	for _, up := range []crawlkit.UsagePolicy{
		{Action: crawlkit.UsageSkip + 1},
		{Action: crawlkit.UsageMark, Purpose: usage.Automated + 1},
		{Action: crawlkit.UsageMark, TDMRep: true, TDMRepTTL: -1},
	} {
		_, err := crawlkit.New(crawlkit.Config{UserAgent: testAgent, Seeds: []string{"http://example.test/"}, Usage: up})
		if !errors.Is(err, crawlkit.ErrConfig) {
			t.Errorf("%+v: %v", up, err)
		}
	}
}

// TestUsageRedirectAndBrokenTDMRep checks that a redirect to a URL
// robots.txt reserves is refused like the URL itself, and that an
// unreadable tdmrep.json means nothing is known: it is fetched once, and
// the crawl goes on.
func TestUsageRedirectAndBrokenTDMRep(t *testing.T) {
	for _, tdm := range []func(w http.ResponseWriter){
		func(w http.ResponseWriter) { http.Error(w, "oops", http.StatusInternalServerError) },
		func(w http.ResponseWriter) { io.WriteString(w, `{"location": "/", "tdm-reservation": 1}`) },
		func(w http.ResponseWriter) {
			io.WriteString(w, `[{"location": "/", "tdm-reservation": 1}`+strings.Repeat(" ", 70<<10)+`]`)
		},
	} {
		s := serveSite(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			switch r.URL.Path {
			case "/robots.txt":
				io.WriteString(w, "User-agent: *\nContent-Usage: /closed/ train-ai=n\n")
			case "/.well-known/tdmrep.json":
				tdm(w)
			case "/":
				writeHTML(w, `<a href="/go">go</a> <a href="/page">page</a>`)
			case "/go":
				http.Redirect(w, r, "/closed/x", http.StatusFound)
			default:
				writeHTML(w, `<p>`+r.URL.Path+`</p>`)
			}
		})
		got, _, st := usageCrawl(t, s, crawlkit.UsagePolicy{Action: crawlkit.UsageSkip, Purpose: usage.AITraining, TDMRep: true}, nil)
		if g := strings.Join(keys(got), " "); g != "/ /page" {
			t.Errorf("handed on %s", g)
		}
		if n := s.hit("/closed/x"); n != 0 {
			t.Errorf("the redirect target robots.txt reserves was requested %d times", n)
		}
		if st.URLs.NotFetched[crawlkit.ReasonUsage] != 1 || st.Usage != (crawlkit.UsageStats{TDMRepFetches: 1}) {
			t.Errorf("NotFetched %v, Stats.Usage %+v", st.URLs.NotFetched, st.Usage)
		}
		if p := got["/page"]; p == nil || p.Usage.AITraining != usage.Unknown {
			t.Errorf("/page usage %+v", p)
		}
	}
}
