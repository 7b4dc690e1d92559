package crawlkit_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	crawlkit "github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/archive/warc"
	"github.com/crawlkit/crawlkit/fetch"
)

// warcRecord is one record of a WARC file: its fields and block.
type warcRecord struct {
	fields http.Header
	block  []byte
}

// readWARCRecords reads every record of the finished WARC files in dir, in
// order, one per gzip member.
func readWARCRecords(t *testing.T, dir string) []warcRecord {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if len(files) == 0 {
		t.Fatal("no WARC file written")
	}
	sort.Strings(files)
	var out []warcRecord
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		br := bytes.NewReader(data)
		for br.Len() > 0 {
			zr, err := gzip.NewReader(br)
			if err != nil {
				t.Fatal(err)
			}
			zr.Multistream(false)
			member, err := io.ReadAll(zr)
			if err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(bytes.NewReader(member))
			if line, _ := r.ReadString('\n'); line != "WARC/1.1\r\n" {
				t.Fatalf("version line %q", line)
			}
			rec := warcRecord{fields: http.Header{}}
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					t.Fatal(err)
				}
				if line == "\r\n" {
					break
				}
				k, v, _ := strings.Cut(strings.TrimSuffix(line, "\r\n"), ":")
				rec.fields.Add(k, strings.TrimSpace(v))
			}
			n, _ := strconv.Atoi(rec.fields.Get("Content-Length"))
			rec.block = make([]byte, n)
			if _, err := io.ReadFull(r, rec.block); err != nil {
				t.Fatal(err)
			}
			out = append(out, rec)
		}
	}
	return out
}

// requestHead parses an HTTP request held in a request record's block.
func requestHead(t *testing.T, block []byte) (string, http.Header) {
	t.Helper()
	head, _, ok := strings.Cut(string(block), "\r\n\r\n")
	if !ok {
		t.Fatalf("request block %q has no end of header", block)
	}
	lines := strings.Split(head, "\r\n")
	h := http.Header{}
	for _, l := range lines[1:] {
		k, v, _ := strings.Cut(l, ":")
		h.Add(k, strings.TrimSpace(v))
	}
	return lines[0], h
}

// TestWARCSinkRecordsRequestsAsSent fetches a redirect chain with a
// recrawl's conditional headers and configured extra headers, builds the
// Page from the fetch.Response as the Crawler does, archives it, and checks
// that every request record holds the header the server received for that
// request (less the transport's Connection) and that every record carries
// the server's address as WARC-IP-Address.
func TestWARCSinkRecordsRequestsAsSent(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]http.Header{} // path -> header received
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := r.Header.Clone()
		h.Set("Host", r.Host)
		seen[r.URL.Path] = h
		mu.Unlock()
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><title>new</title></html>")
	}))
	defer srv.Close()
	serverIP := netip.MustParseAddrPort(srv.Listener.Addr().String()).Addr().String()

	f, err := fetch.New(fetch.Config{
		UserAgent:  "crawlkit-test/1.0 (+https://example.invalid/bot)",
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
		Header:     http.Header{"From": {"bot@example.invalid"}, "Accept-Language": {"en"}},
		// No politeness delay between the hops to the test server.
		PolitenessConfig: fetch.PolitenessConfig{Delay: -1, DelayFactor: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	resp, err := f.Do(context.Background(), &fetch.Request{URL: srv.URL + "/old",
		Header:     http.Header{"X-Crawl-Run": {"7"}},
		Validators: fetch.Validators{ETag: `"abc"`, LastModified: "Mon, 02 Jan 2006 15:04:05 GMT"}})
	if err != nil {
		t.Fatal(err)
	}
	page := &crawlkit.Page{
		URL:           srv.URL + "/old",
		FinalURL:      resp.FinalURL.String(),
		StatusCode:    resp.StatusCode,
		Header:        resp.Header,
		Body:          resp.Body,
		Fetched:       time.Now(),
		Redirects:     resp.Redirects,
		RequestHeader: resp.RequestHeader,
		RemoteAddr:    resp.RemoteAddr,
	}

	dir := t.TempDir()
	sink, err := crawlkit.NewWARCSink(warc.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := sink.Write(context.Background(), page); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}

	var requests, responses int
	for _, rec := range readWARCRecords(t, dir) {
		typ, target := rec.fields.Get("WARC-Type"), rec.fields.Get("WARC-Target-URI")
		if typ == "warcinfo" {
			continue
		}
		if got := rec.fields.Get("WARC-IP-Address"); got != serverIP {
			t.Errorf("%s %s: WARC-IP-Address %q, want %q", typ, target, got, serverIP)
		}
		switch typ {
		case "response":
			responses++
		case "request":
			requests++
			u, _ := url.Parse(target)
			line, got := requestHead(t, rec.block)
			if line != "GET "+u.Path+" HTTP/1.1" {
				t.Errorf("%s: request line %q", target, line)
			}
			mu.Lock()
			want := seen[u.Path].Clone()
			mu.Unlock()
			want.Del("Connection")
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: request record header\n %v\nserver received\n %v", target, got, want)
			}
			conditional := got.Get("If-None-Match") != ""
			if conditional != (u.Path == "/old") {
				t.Errorf("%s: If-None-Match %q; only the first request is conditional", target, got.Get("If-None-Match"))
			}
			for _, k := range []string{"User-Agent", "From", "Accept", "Accept-Encoding", "Accept-Language", "X-Crawl-Run"} {
				if got.Get(k) == "" {
					t.Errorf("%s: no %s in the request record", target, k)
				}
			}
		}
	}
	if requests != 2 || responses != 2 {
		t.Errorf("%d request and %d response records, want 2 and 2", requests, responses)
	}
}

// TestWARCSinkWithoutAddressOrHopHeader: a page whose addresses are unknown
// is archived without WARC-IP-Address, and a hop without a request header
// of its own is recorded with the page's.
func TestWARCSinkWithoutAddressOrHopHeader(t *testing.T) {
	dir := t.TempDir()
	sink, err := crawlkit.NewWARCSink(warc.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	old, _ := url.Parse("http://a.test/old")
	page := &crawlkit.Page{
		URL: "http://a.test/old", FinalURL: "http://a.test/new", StatusCode: 200, Body: []byte("x"),
		Redirects: []fetch.Hop{{URL: old, Status: 301, Header: http.Header{"Location": {"/new"}},
			RemoteAddr: netip.MustParseAddrPort("[2001:db8::7]:80")}},
		RequestHeader: http.Header{"User-Agent": {"bot/1.0"}},
	}
	if err := sink.Write(context.Background(), page); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	for _, rec := range readWARCRecords(t, dir) {
		typ, target := rec.fields.Get("WARC-Type"), rec.fields.Get("WARC-Target-URI")
		if typ == "warcinfo" {
			continue
		}
		want := ""
		if target == "http://a.test/old" {
			want = "2001:db8::7"
		}
		if got := rec.fields.Get("WARC-IP-Address"); got != want || (want == "") != (len(rec.fields.Values("WARC-IP-Address")) == 0) {
			t.Errorf("%s %s: WARC-IP-Address %q, want %q", typ, target, got, want)
		}
		if typ == "request" {
			if _, h := requestHead(t, rec.block); h.Get("User-Agent") != "bot/1.0" || h.Get("Host") != "a.test" {
				t.Errorf("%s: request header %v", target, h)
			}
		}
	}
}
