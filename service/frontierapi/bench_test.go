package frontierapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/service/frontierapi"
)

const benchBatch = 100

// batchURLs returns benchBatch fresh URLs over 50 hosts.
func batchURLs(i int) []string {
	out := make([]string, benchBatch)
	for j := range out {
		out[j] = fmt.Sprintf("http://h%d.test/section/%d/page-%d.html?id=%d", j%50, i, j, i*benchBatch+j)
	}
	return out
}

// BenchmarkFrontierAdd is the baseline: the same URLs added to an in-memory
// frontier directly, with no normalization, dedup, JSON or HTTP.
func BenchmarkFrontierAdd(b *testing.B) {
	f, err := frontier.New(frontier.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	now := time.Now()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		urls := batchURLs(i)
		b.StartTimer()
		entries := make([]frontier.Entry, len(urls))
		for j, u := range urls {
			entries[j] = frontier.Entry{URL: u}
		}
		if err := f.AddAt(now, entries...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchBatch), "ns/url")
}

// BenchmarkServiceSubmit is POST /api/v1/frontier/urls through the handler
// (no network): JSON decoding, normalization, the seen set, the frontier and
// the JSON answer, per batch of 100 new URLs.
func BenchmarkServiceSubmit(b *testing.B) {
	s, err := frontierapi.New(frontierapi.Config{Token: token})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		b.StopTimer() // the client's side: building the request
		req := frontierapi.SubmitRequest{}
		for _, u := range batchURLs(i) {
			req.URLs = append(req.URLs, frontierapi.SubmitURL{URL: u, SourceURL: "http://h0.test/", Depth: 1})
		}
		body, _ := json.Marshal(req)
		b.StartTimer()
		r := httptest.NewRequest("POST", "/api/v1/frontier/urls", bytes.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != http.StatusAccepted {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchBatch), "ns/url")
}

// BenchmarkServiceLeaseSettle is one GET /next of up to 50 URLs (one per
// host) and the POST /results that settles them, through the handler.
func BenchmarkServiceLeaseSettle(b *testing.B) {
	s, err := frontierapi.New(frontierapi.Config{Token: token, Delay: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	serve := func(method, target string, body []byte) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, target, bytes.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w
	}
	settled := 0
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		if s.Stats().URLs.Queued < 50 {
			req := frontierapi.SubmitRequest{}
			for k := range 20 {
				for _, u := range batchURLs(i*20 + k) {
					req.URLs = append(req.URLs, frontierapi.SubmitURL{URL: u})
				}
			}
			if _, err := s.Submit(req); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		w := serve("GET", "/api/v1/frontier/next?worker_id=w&batch_size=50", nil)
		var l frontierapi.NextResponse
		if err := json.Unmarshal(w.Body.Bytes(), &l); err != nil || len(l.URLs) == 0 {
			b.Fatalf("next: %v %s", err, w.Body)
		}
		res := frontierapi.ResultsRequest{LeaseID: l.LeaseID}
		for _, u := range l.URLs {
			res.Results = append(res.Results, frontierapi.Result{URL: u.URL, Status: frontierapi.ResultSuccess, HTTPStatus: 200, SimHash: "0123456789abcdef"})
		}
		body, _ := json.Marshal(res)
		if w := serve("POST", "/api/v1/frontier/results", body); w.Code != 200 {
			b.Fatalf("results: %d %s", w.Code, w.Body)
		}
		settled += len(l.URLs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(settled), "ns/url")
}

// BenchmarkServiceSubmitPebble is BenchmarkServiceSubmit on the durable
// configuration: the frontier and the seen set on Pebble with synced
// writes, as examples/frontierd runs. The figure is dominated by fsync.
func BenchmarkServiceSubmitPebble(b *testing.B) {
	s, db, err := openService(b.TempDir(), frontierapi.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	defer s.Close()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		req := frontierapi.SubmitRequest{}
		for _, u := range batchURLs(i) {
			req.URLs = append(req.URLs, frontierapi.SubmitURL{URL: u})
		}
		b.StartTimer()
		if resp, err := s.Submit(req); err != nil || resp.Accepted != benchBatch {
			b.Fatalf("%v %+v", err, resp.Accepted)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchBatch), "ns/url")
}
