package frontierapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/service/frontierapi"
)

// FuzzHandler sends arbitrary bodies and query strings to every endpoint:
// the service must answer with JSON and never with a 5xx, whatever a
// client sends.
func FuzzHandler(f *testing.F) {
	f.Add(0, "", `{"urls":[{"url":"http://a.test/","depth":1,"priority":0.5}]}`)
	f.Add(0, "", `{"urls":[{"url":"http://a.test/%zz"},{"url":"javascript:x"},{"url":""}],"crawl_id":"c"}`)
	f.Add(1, "worker_id=w&batch_size=3&timeout_ms=0", "")
	f.Add(1, "worker_id=&batch_size=-1", "")
	f.Add(2, "", `{"lease_id":"x","results":[{"url":"http://a.test/","status":"success","simhash":"ff"}]}`)
	f.Add(2, "", `{"lease_id":"","results":null}`)
	f.Add(3, "", "")
	f.Add(0, "", `{"urls":[{"url":"http://a.test/","discovered_at":"yesterday"}]}`)
	f.Add(0, "", `[1,2,3]`)
	srv, err := frontierapi.New(frontierapi.Config{Token: token, Delay: -1, MaxBodyBytes: 1 << 16, MaxURLs: 100, MaxWait: 1})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Close() })
	paths := []string{"/api/v1/frontier/urls", "/api/v1/frontier/next", "/api/v1/frontier/results", "/api/v1/stats"}
	methods := []string{"POST", "GET", "POST", "GET"}
	f.Fuzz(func(t *testing.T, ep int, query, body string) {
		if ep < 0 {
			ep = -ep
		}
		ep %= len(paths)
		target := paths[ep]
		if query != "" {
			target += "?" + query
		}
		req, err := http.NewRequest(methods[ep], "http://svc"+paths[ep], strings.NewReader(body))
		if err != nil {
			t.Skip()
		}
		req.URL.RawQuery = query
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q: %d %s", methods[ep], target, body, rec.Code, rec.Body)
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%s %s %q: body is not JSON: %q", methods[ep], target, body, rec.Body)
		}
	})
}
