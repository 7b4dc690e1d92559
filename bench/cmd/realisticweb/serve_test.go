package main

import (
	"bytes"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/crawlkit/crawlkit/bench/internal/harness"
	"github.com/klauspost/compress/gzip"
)

// testWeb serves a small realistic web over TLS with its test CA and
// returns it with a client that trusts only that CA and reaches every
// *.test host through the server.
func testWeb(t *testing.T) (*web, *http.Client) {
	t.Helper()
	c := loadTestCorpus(t)
	s := newSite(3, 8, 10, 12)
	bodies := buildAll(s, c)
	truth := s.truth(5)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	j := newJudge(s, truth)
	w := &web{s: s, bodies: bodies, j: j, hostIdx: map[string]int{}, latency: func() time.Duration { return 0 }}
	for i, h := range s.hosts {
		w.hostIdx[h.name] = i
	}
	certs, err := newIssuer(caFile, w.knows)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(w)
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{GetCertificate: certs.GetCertificate,
		VerifyConnection: func(tls.ConnectionState) error { j.handshake(); return nil }}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	tr, err := harness.TransportFor(harness.Params{Web: srv.Listener.Addr().String(), CAFile: caFile})
	if err != nil {
		t.Fatal(err)
	}
	tr.DisableCompression = true // the test decodes itself
	t.Cleanup(tr.CloseIdleConnections)
	return w, &http.Client{Transport: tr}
}

func get(t *testing.T, c *http.Client, url, accept string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if accept != "" {
		req.Header.Set("Accept-Encoding", accept)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// The web answers over HTTP/2 with its test CA's certificate, and each
// encoding decodes to the same page.
func TestServesH2WithEncodings(t *testing.T) {
	w, c := testWeb(t)
	url := "https://" + w.s.hosts[0].name + w.s.pages[1].path
	var pages [][]byte
	for _, accept := range []string{"gzip, deflate, br, zstd", "gzip", ""} {
		resp, body := get(t, c, url, accept)
		if resp.StatusCode != 200 || resp.ProtoMajor != 2 {
			t.Fatalf("%s: %s over %s, want 200 over HTTP/2", accept, resp.Status, resp.Proto)
		}
		var r io.Reader
		switch enc := resp.Header.Get("Content-Encoding"); enc {
		case "br":
			r = brotli.NewReader(bytes.NewReader(body))
		case "gzip":
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			r = zr
		case "":
			r = bytes.NewReader(body)
		}
		want := map[string]string{"gzip, deflate, br, zstd": "br", "gzip": "gzip", "": ""}[accept]
		if got := resp.Header.Get("Content-Encoding"); got != want {
			t.Errorf("Accept-Encoding %q answered %q, want %q", accept, got, want)
		}
		page, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, page)
	}
	if len(pages[0]) != w.s.pages[1].size || string(pages[0]) != string(pages[1]) || string(pages[1]) != string(pages[2]) {
		t.Fatalf("encodings decode to different pages (%d, %d, %d bytes; size %d)", len(pages[0]), len(pages[1]), len(pages[2]), w.s.pages[1].size)
	}
	if rep := w.j.report(); rep.TLSHandshakes != 1 || rep.Protocols["HTTP/2.0"] != 3 || rep.DecodedBytes != 3*int64(len(pages[0])) {
		t.Errorf("report %+v: want 1 handshake, 3 HTTP/2 requests, %d decoded bytes", rep, 3*len(pages[0]))
	}
}

// A client that does not trust the test CA cannot connect.
func TestUntrustedClientFails(t *testing.T) {
	w, c := testWeb(t)
	tr := c.Transport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{}
	_, err := (&http.Client{Transport: tr}).Get("https://" + w.s.hosts[0].name + "/")
	if err == nil {
		t.Fatal("a client without the test CA connected")
	}
}

// The judge counts robots violations, requests before robots.txt,
// duplicates by spelling and overlapping requests to a host.
func TestJudge(t *testing.T) {
	w, c := testWeb(t)
	var h, priv int = -1, -1
	for i, hs := range w.s.hosts {
		for q := hs.first; q < hs.first+hs.n; q++ {
			if hs.robots.disallows(w.s.pages[q].path) {
				h, priv = i, q
			}
		}
	}
	if priv < 0 {
		t.Skip("no disallowed page in this web")
	}
	base := "https://" + w.s.hosts[h].name
	get(t, c, base+"/", "gzip")                             // before robots
	get(t, c, base+"/robots.txt", "gzip")                   // robots
	get(t, c, base+w.s.pages[priv].path, "gzip")            // violation
	get(t, c, base+"/", "gzip")                             // exact repeat
	get(t, c, base+"/#top", "gzip")                         // the fragment is not sent: exact repeat
	get(t, c, base+"/?utm_source=x", "gzip")                // spelling repeat
	get(t, c, "https://"+w.s.hosts[h].name+":443/", "gzip") // spelling repeat (default port)
	get(t, c, base+"/no-such-page.html", "gzip")            // not found
	get(t, c, "https://"+assetHost+"/a", "gzip")            // off the web
	rep := w.j.report()
	if rep.Pages != 7 || rep.RobotsFetches != 1 || rep.BeforeRobots != 1 || rep.RobotsViolations != 1 ||
		rep.ExactRepeats != 2 || rep.SpellingRepeats != 2 || rep.NotFound != 1 || rep.OffWeb != 1 {
		t.Fatalf("report %+v", rep)
	}

	// Two requests to one host at once: one concurrency violation.
	w.j.reset()
	end1 := w.j.begin(h, base+"/", 0)
	end2 := w.j.begin(h, base+"/x", -1)
	end1()
	end2()
	if rep := w.j.report(); rep.ConcurrencyViolations != 1 {
		t.Fatalf("overlap not counted: %+v", rep)
	}
}
