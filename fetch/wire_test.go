package fetch

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
)

// TestFetchKeepWire: with KeepWire, a response is kept as received beside
// the decoded body: the encoded bytes of a gzip body, de-chunked, and the
// reason phrase the server sent. The decoded body is the one the Fetcher
// gives without KeepWire.
func TestFetchKeepWire(t *testing.T) {
	page := strings.Repeat("<p>archived as received</p>\n", 200)
	encoded := gzipped(page)
	noise := make([]byte, 5000)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range noise {
		noise[i] = byte(r.Uint32())
	}
	incompressible := gzipped(string(noise))
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch req.URL.Path {
		case "/chunked":
			// Written by hand: a reason phrase of the server's own and a
			// chunked gzip body.
			conn, bw, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			fmt.Fprint(bw, "HTTP/1.1 200 Fine Thanks\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
			for rest := encoded; len(rest) > 0; {
				n := min(len(rest), 100)
				fmt.Fprintf(bw, "%x\r\n%s\r\n", n, rest[:n])
				rest = rest[n:]
			}
			fmt.Fprint(bw, "0\r\n\r\n")
			bw.Flush()
		case "/plain":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(page))
		case "/noise":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(incompressible)
		case "/redirect":
			http.Redirect(w, req, "/plain", http.StatusFound)
		}
	}))
	f := newTestFetcher(t, web, func(c *Config) { c.KeepWire = true })
	plain := newTestFetcher(t, web, nil)

	resp, err := f.Fetch(context.Background(), "http://wire.test/chunked")
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != page {
		t.Errorf("decoded body changed: %d bytes", len(resp.Body))
	}
	w := resp.Wire
	if w == nil || !bytes.Equal(w.Body, encoded) || w.Truncated || w.Reason != "Fine Thanks" || w.Proto != "HTTP/1.1" || w.TLS != nil {
		t.Fatalf("wire %+v, want the %d gzip bytes as sent, reason %q", w, len(encoded), "Fine Thanks")
	}
	without, err := plain.Fetch(context.Background(), "http://wire.test/chunked")
	if err != nil || without.Wire != nil || !bytes.Equal(without.Body, resp.Body) {
		t.Errorf("without KeepWire: wire %v, body equal %v, err %v", without.Wire, bytes.Equal(without.Body, resp.Body), err)
	}

	// Without a content coding, the wire body is the decoded body itself.
	resp, err = f.Fetch(context.Background(), "http://wire.test/plain")
	if err != nil {
		t.Fatal(err)
	}
	if w := resp.Wire; w == nil || len(w.Body) != len(page) || &w.Body[0] != &resp.Body[0] || w.Reason != "OK" {
		t.Errorf("identity body: wire %+v does not share the body", w)
	}

	// A redirect hop keeps its status line, not its body.
	resp, err = f.Fetch(context.Background(), "http://wire.test/redirect")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Redirects) != 1 || resp.Redirects[0].Wire == nil || resp.Redirects[0].Wire.Reason != "Found" || resp.Redirects[0].Wire.Body != nil {
		t.Errorf("redirect hop: %+v", resp.Redirects)
	}
}

// TestFetchKeepWireLimit: the kept encoded bytes are bounded by
// MaxBodyBytes too. A body whose decoded form is cut but whose encoded
// bytes were all read is kept whole; one whose encoded bytes are over the
// limit is cut there, and says so.
func TestFetchKeepWireLimit(t *testing.T) {
	small := gzipped(strings.Repeat("x", 3000)) // a few dozen bytes
	noise := make([]byte, 5000)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range noise {
		noise[i] = byte(r.Uint32())
	}
	large := gzipped(string(noise))
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		if req.URL.Path == "/small" {
			w.Write(small)
			return
		}
		w.Write(large)
	}))
	f := newTestFetcher(t, web, func(c *Config) { c.KeepWire = true; c.MaxBodyBytes = 1000 })

	resp, err := f.Fetch(context.Background(), "http://wire.test/small")
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Truncated || len(resp.Body) != 1000 || !bytes.Equal(resp.Wire.Body, small) || resp.Wire.Truncated {
		t.Errorf("small encoding of a large body: body %d truncated %v, wire %d truncated %v",
			len(resp.Body), resp.Truncated, len(resp.Wire.Body), resp.Wire.Truncated)
	}

	resp, err = f.Fetch(context.Background(), "http://wire.test/large")
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Wire.Truncated || len(resp.Wire.Body) != 1000 || !bytes.Equal(resp.Wire.Body, large[:1000]) || cap(resp.Wire.Body) > 1000 {
		t.Errorf("large encoding: wire %d bytes (cap %d), truncated %v; want the first 1000, truncated",
			len(resp.Wire.Body), cap(resp.Wire.Body), resp.Wire.Truncated)
	}
}
