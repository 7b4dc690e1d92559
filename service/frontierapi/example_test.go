package frontierapi_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/crawlkit/crawlkit/service/frontierapi"
)

// A service in memory and one worker round trip: submit, lease, settle.
func Example() {
	srv, err := frontierapi.New(frontierapi.Config{Token: "s3cret", Delay: -1})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv)
	defer ts.Close()

	ctx := context.Background()
	c := frontierapi.NewClient(ts.URL, "s3cret", nil)
	sub, err := c.Submit(ctx, frontierapi.SubmitRequest{URLs: []frontierapi.SubmitURL{
		{URL: "https://Example.com/a?utm_source=feed"},
		{URL: "https://example.com/a"},
		{URL: "mailto:someone@example.com"},
	}})
	if err != nil {
		panic(err)
	}
	fmt.Printf("accepted %d, duplicates %d, rejected %d\n", sub.Accepted, sub.Duplicates, sub.Rejected)

	lease, err := c.Next(ctx, "worker-1", 10, 0)
	if err != nil {
		panic(err)
	}
	for _, u := range lease.URLs {
		fmt.Println("fetch", u.URL, "on", u.Host)
	}
	res, err := c.Results(ctx, frontierapi.ResultsRequest{LeaseID: lease.LeaseID, WorkerID: "worker-1", Results: []frontierapi.Result{
		{URL: lease.URLs[0].URL, Status: frontierapi.ResultSuccess, HTTPStatus: 200, LinksFound: 3},
	}})
	if err != nil {
		panic(err)
	}
	fmt.Println("processed", res.Processed, res.Results[0].Outcome)

	st, err := c.Stats(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Printf("fetched %d, successful %d, queued %d\n", st.URLs.Fetched, st.URLs.Successful, st.URLs.Queued)
	// Output:
	// accepted 1, duplicates 1, rejected 1
	// fetch https://example.com/a on example.com
	// processed 1 done
	// fetched 1, successful 1, queued 0
}

// Errors carry a stable code.
func ExampleAPIError() {
	srv, _ := frontierapi.New(frontierapi.Config{Token: "s3cret"})
	defer srv.Close()
	ts := httptest.NewServer(srv)
	defer ts.Close()

	_, err := frontierapi.NewClient(ts.URL, "wrong", nil).Stats(context.Background())
	fmt.Println(err)
	_, err = frontierapi.NewClient(ts.URL, "s3cret", nil).Next(context.Background(), "w", 5000, 0)
	fmt.Println(err)
	// Output:
	// frontierapi: 401 unauthorized: missing or invalid bearer token
	// frontierapi: 400 invalid_parameter: batch_size "5000": want an integer from 1 to 1000
}
