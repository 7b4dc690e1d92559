package dashboard_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/crawlkit/crawlkit/service/dashboard"
)

// A dashboard over a source of numbers. In a program, mount d on an
// http.ServeMux (or serve it on its own loopback listener) and open it in a
// browser; here a test server stands in and the sampler is driven by hand.
func Example() {
	fetched := int64(0)
	source := func() dashboard.Snapshot {
		fetched += 40
		return dashboard.Snapshot{
			URLs:        dashboard.URLCounts{Discovered: 500, Queued: 500 - fetched, Fetched: fetched, Successful: fetched},
			Throughput:  dashboard.Throughput{Current: 4, Average: 4, Peak: 4},
			QueueByBand: []int64{10, 200, 250 - fetched},
		}
	}
	d, err := dashboard.New(dashboard.Config{Source: source, Interval: -1})
	if err != nil {
		panic(err)
	}
	defer d.Close()
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	d.SampleAt(start)
	d.SampleAt(start.Add(10 * time.Second))

	ts := httptest.NewServer(d)
	defer ts.Close()
	resp, err := ts.Client().Get(ts.URL + "/api/snapshot")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var body struct {
		Snapshot dashboard.Snapshot
		History  []dashboard.Point
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		panic(err)
	}
	fmt.Println("fetched", body.Snapshot.URLs.Fetched, "queued", body.Snapshot.URLs.Queued, "bands", body.Snapshot.QueueByBand)
	for _, p := range body.History {
		fmt.Println(p.Time.Format(time.TimeOnly), p.Fetched)
	}
	// Output:
	// fetched 80 queued 420 bands [10 200 170]
	// 00:00:00 40
	// 00:00:10 80
}
