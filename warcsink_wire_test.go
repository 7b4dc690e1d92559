package crawlkit_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	crawlkit "github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/archive/warc"
	"github.com/crawlkit/crawlkit/fetch"
)

// TestWARCSinkArchivesWireBody crawls a site that sends its page gzipped
// (and chunked) with a WARCSink: the Handler sees the decoded page, the
// response record holds the gzip bytes as sent, with Content-Encoding and
// the length of what it holds, and robots.txt is archived too.
func TestWARCSinkArchivesWireBody(t *testing.T) {
	const page = "<html><title>zipped</title><body>sent with Content-Encoding: gzip</body></html>"
	var encoded bytes.Buffer
	zw := gzip.NewWriter(&encoded)
	zw.Write([]byte(page))
	zw.Close()
	s := serveSite(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(encoded.Bytes()[:10])
		w.(http.Flusher).Flush() // chunked: no Content-Length
		w.Write(encoded.Bytes()[10:])
	})
	dir := t.TempDir()
	sink, err := crawlkit.NewWARCSink(warc.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	pages := s.crawl(t, func(c *crawlkit.Config) { c.Sink = sink })
	if p := pages["/"]; p == nil || string(p.Body) != page {
		t.Fatalf("the Handler got %+v, want the decoded page", p)
	}
	var robots, responses int
	for _, r := range readWARCRecords(t, dir) {
		if r.fields.Get("WARC-Type") != "response" {
			continue
		}
		target := r.fields.Get("WARC-Target-URI")
		if strings.HasSuffix(target, "/robots.txt") {
			robots++
			continue
		}
		responses++
		head, body, _ := bytes.Cut(r.block, []byte("\r\n\r\n"))
		head = append(head, "\r\n"...)
		if !bytes.Equal(body, encoded.Bytes()) || !bytes.Contains(head, []byte("\r\nContent-Encoding: gzip\r\n")) ||
			!bytes.Contains(head, []byte("\r\nX-Crawler-Transfer-Encoding: chunked\r\n")) ||
			!bytes.Contains(head, []byte("\r\nContent-Length: "+strconv.Itoa(encoded.Len())+"\r\n")) {
			t.Errorf("%s: recorded\n%s\nwith %d body bytes; want the %d gzip bytes as sent", target, head, len(body), encoded.Len())
		}
		if got := r.fields.Values("WARC-Protocol"); len(got) != 1 || got[0] != "http/1.1" {
			t.Errorf("WARC-Protocol %q", got)
		}
	}
	if robots != 1 || responses != 1 {
		t.Errorf("%d robots.txt and %d page response records, want 1 and 1", robots, responses)
	}
}

// TestWARCSinkRecordsTLS: a page fetched over HTTP/2 and TLS 1.3 is
// archived with WARC-Protocol h2 and tls/1.3 and its cipher suite, from
// the connection as the fetcher reports it.
func TestWARCSinkRecordsTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html>over h2</html>"))
	}))
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS13}
	srv.StartTLS()
	defer srv.Close()
	f, err := fetch.New(fetch.Config{
		UserAgent:  "crawlkit-test/1.0 (+https://example.invalid/bot)",
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
		Transport:  srv.Client().Transport,
		KeepWire:   true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	resp, err := f.Fetch(context.Background(), srv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sink, err := crawlkit.NewWARCSink(warc.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	p := &crawlkit.Page{URL: srv.URL + "/", FinalURL: resp.FinalURL.String(), StatusCode: resp.StatusCode, Header: resp.Header,
		Body: resp.Body, Fetched: time.Now(), RequestHeader: resp.RequestHeader, Wire: resp.Wire}
	if err := sink.Write(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	want := tls.CipherSuiteName(resp.Wire.TLS.CipherSuite)
	for _, r := range readWARCRecords(t, dir)[1:] {
		if got := r.fields.Values("WARC-Protocol"); len(got) != 2 || got[0] != "h2" || got[1] != "tls/1.3" ||
			r.fields.Get("WARC-Cipher-Suite") != want || !strings.HasPrefix(want, "TLS_") {
			t.Errorf("%s: WARC-Protocol %q, WARC-Cipher-Suite %q (connection's %s)", r.fields.Get("WARC-Type"), got, r.fields.Get("WARC-Cipher-Suite"), want)
		}
	}
}
