package warc_test

import (
	"bytes"
	"compress/gzip"
	"crypto/tls"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/archive/warc"
)

// TestWarcioReadsRecords writes every kind of exchange the Writer handles
// and has warcio.js, an independent reader, check the files with
// scripts/warccheck.mjs: records parse, block and payload digests match,
// and the CDXJ indexes agree with warcio's cdx-index. It needs Node and
// an npm install of warcio@2.4.11 named by WARCIO_DIR (tests do not reach
// the network to install it; scripts/warccheck.sh does).
func TestWarcioReadsRecords(t *testing.T) {
	dir := os.Getenv("WARCIO_DIR")
	node, err := exec.LookPath("node")
	if dir == "" || err != nil {
		t.Skip("needs node and WARCIO_DIR, an `npm install warcio@2.4.11` directory (scripts/warccheck.sh sets it up)")
	}
	out := t.TempDir()
	w, err := warc.New(warc.Config{Dir: out, MaxFileSize: 16 << 10, Index: true})
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(bytes.Repeat([]byte("<p>compressed page</p>\n"), 300))
	zw.Close()
	decoded := bytes.Repeat([]byte("<p>compressed page</p>\n"), 300)
	html := http.Header{"Content-Type": {"text/html; charset=utf-8"}}
	gzipped := http.Header{"Content-Type": {"text/html"}, "Content-Encoding": {"gzip"}}
	tlsState := &tls.ConnectionState{Version: tls.VersionTLS13, CipherSuite: tls.TLS_AES_256_GCM_SHA384}
	date := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, ex := range []warc.Exchange{
		{URL: "https://www.a.test/?b=2&a=1", StatusCode: 200, Proto: "HTTP/2.0", TLS: tlsState, Header: gzipped, Body: decoded, WireBody: gz.Bytes()},
		{URL: "https://a.test/chunked", StatusCode: 200, Reason: "Okay", Header: gzipped, TransferEncoding: []string{"chunked"}, Body: decoded, WireBody: gz.Bytes()},
		{URL: "http://a.test/cut", StatusCode: 200, Header: gzipped, Body: decoded[:100], WireBody: gz.Bytes()[:40], Truncated: true},
		{URL: "http://a.test/plain", StatusCode: 200, Header: html, Body: randomBody(rand.New(rand.NewSource(3)), 20000)},
		{URL: "http://a.test/decoded", StatusCode: 200, Header: gzipped, Body: decoded},
		{URL: "http://a.test/gone", StatusCode: 404, Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("gone")},
		{URL: "http://a.test/moved", StatusCode: 301, Header: http.Header{"Location": {"/plain"}}},
		{URL: "http://a.test/", StatusCode: 304, Header: http.Header{"Etag": {`"1"`}}},
		{URL: "http://a.test/empty", StatusCode: 204},
		{URL: "http://a.test/robots.txt", StatusCode: 200, Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("User-agent: *\nAllow: /\n")},
	} {
		ex.Date = date.Add(time.Duration(i) * time.Second)
		ex.IP = "192.0.2.1"
		if _, err := w.WriteExchange(&ex); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.warc.gz"))
	cmd := exec.Command(node, append([]string{"../../scripts/warccheck.mjs", dir}, files...)...)
	res, err := cmd.CombinedOutput()
	t.Logf("warccheck: %s", res)
	if err != nil {
		t.Fatalf("warccheck: %v", err)
	}
}
