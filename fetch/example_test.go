package fetch_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
)

func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		fmt.Fprint(w, "<title>hello</title>")
	}))
	defer srv.Close()

	f, err := fetch.New(fetch.Config{
		UserAgent: "examplebot/1.0 (+https://example.com/bot)",
		// The test server listens on loopback, which the address guard
		// refuses unless allowed explicitly.
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	})
	if err != nil {
		panic(err)
	}
	defer f.Close()

	ctx := context.Background()
	resp, err := f.Fetch(ctx, srv.URL+"/page")
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.StatusCode, resp.ContentType, resp.Charset, string(resp.Body))

	// A recrawl sends the validators back; an unchanged page is reported as
	// not modified. (It also waits out the host's 1 s politeness delay.)
	_, err = f.Do(ctx, &fetch.Request{URL: srv.URL + "/page", Validators: resp.Validators()})
	fmt.Println(errors.Is(err, fetch.ErrNotModified))

	// Without the allow-list, the same server is refused before connecting.
	strict, _ := fetch.New(fetch.Config{UserAgent: "examplebot/1.0"})
	defer strict.Close()
	_, err = strict.Fetch(ctx, srv.URL)
	fmt.Println(errors.Is(err, fetch.ErrBlockedAddress))
	// Output:
	// 200 text/html utf-8 <title>hello</title>
	// true
	// true
}

func ExamplePoliteness() {
	p := fetch.NewPoliteness(fetch.PolitenessConfig{})
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

	// A fetch from 12:00:00 to 12:00:00.1 that was answered 429 Retry-After: 120.
	if ok, _ := p.TryAcquire("example.com", now); ok {
		p.Release("example.com", now, now.Add(100*time.Millisecond), fetch.Outcome{
			Status: 429, RetryAfter: 120 * time.Second, HasRetryAfter: true,
		})
	}
	fmt.Println(p.ReadyAt("example.com", now).Format(time.TimeOnly))
	fmt.Println(p.ReadyAt("example.org", now).Format(time.TimeOnly))
	// Output:
	// 12:02:00
	// 12:00:00
}

func ExampleGuard() {
	g := fetch.NewGuard(netip.MustParsePrefix("10.20.0.0/16")) // an intranet range let through
	for _, s := range []string{"93.184.215.14", "169.254.169.254", "::ffff:127.0.0.1", "10.20.1.2", "10.30.1.2"} {
		err := g.Check("", netip.MustParseAddr(s))
		fmt.Printf("%-17s %v\n", s, err)
	}
	// Output:
	// 93.184.215.14     <nil>
	// 169.254.169.254   fetch: address guard refused 169.254.169.254: link-local address
	// ::ffff:127.0.0.1  fetch: address guard refused ::ffff:127.0.0.1: loopback (embedded in IPv6) address
	// 10.20.1.2         <nil>
	// 10.30.1.2         fetch: address guard refused 10.30.1.2: private address
}

func ExampleParseRetryAfter() {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, v := range []string{"120", "Sun, 01 Mar 2026 13:00:00 GMT", "soon"} {
		d, ok := fetch.ParseRetryAfter(v, now)
		fmt.Println(d, ok)
	}
	// Output:
	// 2m0s true
	// 1h0m0s true
	// 0s false
}
