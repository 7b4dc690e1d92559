package warc_test

import (
	"bytes"
	"compress/gzip"
	"crypto/tls"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/archive/warc"
)

// TestWireBodyIsRecordedAsReceived: an exchange with a WireBody is recorded
// as the HTTP message came (WARC 1.1 section 6.3.2): the reason phrase and
// Content-Encoding as sent, the encoded body, Content-Length its length,
// the removed transfer coding kept as X-Crawler-Transfer-Encoding. The
// payload digest is that of the encoded body, and a second copy of it is a
// revisit.
func TestWireBodyIsRecordedAsReceived(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("<html>a page sent gzipped</html>"))
	zw.Close()
	encoded := gz.Bytes()

	dir := t.TempDir()
	w, err := warc.New(warc.Config{Dir: dir, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{"Content-Type": {"text/html"}, "Content-Encoding": {"gzip"}}
	ex := warc.Exchange{URL: "https://a.test/", StatusCode: 200, Reason: "Fine", Proto: "HTTP/2.0", Header: h,
		TransferEncoding: []string{"chunked"}, Body: []byte("<html>a page sent gzipped</html>"), WireBody: encoded,
		TLS: &tls.ConnectionState{Version: tls.VersionTLS13, CipherSuite: tls.TLS_AES_128_GCM_SHA256}}
	if _, err := w.WriteExchange(&ex); err != nil {
		t.Fatal(err)
	}
	ex.URL = "https://a.test/copy"
	if res, err := w.WriteExchange(&ex); err != nil || !res.Revisit {
		t.Fatalf("second copy of the encoded body: %+v, %v; want a revisit", res, err)
	}
	cut := ex
	cut.URL, cut.Header, cut.WireBody, cut.Truncated = "https://a.test/cut", h.Clone(), encoded[:10], true
	cut.Header.Set("Content-Length", strconv.Itoa(len(encoded)))
	cut.TransferEncoding = nil
	if _, err := w.WriteExchange(&cut); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	recs := strictRead(t, dir)
	if len(recs) != 7 {
		t.Fatalf("%d records, want 7", len(recs))
	}
	resp := recs[1]
	status, head, body := httpHead(t, resp.block)
	if status != "HTTP/2.0 200 Fine" {
		t.Errorf("status line %q", status)
	}
	if !bytes.Equal(body, encoded) || head.Get("Content-Encoding") != "gzip" || head.Get("Content-Length") != strconv.Itoa(len(encoded)) ||
		head.Get("Transfer-Encoding") != "" || head.Get("X-Crawler-Transfer-Encoding") != "chunked" {
		t.Errorf("recorded head %v with %d body bytes, want the %d gzip bytes as sent", head, len(body), len(encoded))
	}
	if got, want := resp.get("WARC-Payload-Digest"), sha1b32(encoded); got != want {
		t.Errorf("WARC-Payload-Digest %s, want %s, the digest of the body as transferred", got, want)
	}
	for _, r := range recs[1:3] {
		if got := r.fields["warc-protocol"]; len(got) != 2 || got[0] != "h2" || got[1] != "tls/1.3" ||
			r.get("WARC-Cipher-Suite") != "TLS_AES_128_GCM_SHA256" {
			t.Errorf("%s: WARC-Protocol %q, WARC-Cipher-Suite %q", r.get("WARC-Type"), got, r.get("WARC-Cipher-Suite"))
		}
	}
	if rev := recs[3]; rev.get("WARC-Type") != "revisit" || rev.get("WARC-Payload-Digest") != sha1b32(encoded) {
		t.Errorf("revisit %v", rev.fields)
	}
	trunc := recs[5]
	_, head, body = httpHead(t, trunc.block)
	if trunc.get("WARC-Truncated") != "length" || len(body) != 10 || head.Get("Content-Length") != "10" ||
		head.Get("X-Crawler-Content-Length") != strconv.Itoa(len(encoded)) {
		t.Errorf("truncated wire body: WARC-Truncated %q, head %v, %d bytes", trunc.get("WARC-Truncated"), head, len(body))
	}
}

// TestPlainHTTPProtocol: a plain HTTP/1.1 exchange has WARC-Protocol
// http/1.1 and no cipher suite.
func TestPlainHTTPProtocol(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.New(warc.Config{Dir: dir, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteExchange(&warc.Exchange{URL: "http://a.test/", Date: time.Now(), StatusCode: 200, Proto: "HTTP/1.1", Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	for _, r := range strictRead(t, dir)[1:] {
		if got := r.fields["warc-protocol"]; len(got) != 1 || got[0] != "http/1.1" || r.has("WARC-Cipher-Suite") {
			t.Errorf("%s: WARC-Protocol %q, cipher suite %q", r.get("WARC-Type"), got, r.get("WARC-Cipher-Suite"))
		}
	}
}
