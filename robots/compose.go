package robots

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/crawlkit/crawlkit/fetch"
)

// FetchWith is the FetchFunc of a crawler that fetches robots.txt through
// its own fetch.Fetcher, so that the address guard, the size limit and the
// host's politeness apply to robots.txt as to pages. Configure f with
// MaxRedirects -1: the Cache follows redirects itself (RFC 9309 §2.3.1.2)
// and checks every hop.
func FetchWith(f *fetch.Fetcher) FetchFunc {
	return func(ctx context.Context, rawURL string) (*http.Response, error) {
		resp, err := f.Fetch(ctx, rawURL)
		if err != nil {
			return nil, err
		}
		return &http.Response{
			Status:        fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode)),
			StatusCode:    resp.StatusCode,
			Proto:         resp.Proto,
			Header:        resp.Header,
			Body:          io.NopCloser(bytes.NewReader(resp.Body)),
			ContentLength: int64(len(resp.Body)),
		}, nil
	}
}

// ApplyCrawlDelay hands token's Crawl-delay in pol to p for host (capped
// by p's MaxCrawlDelay; none removes an earlier one) and returns it as
// written. A crawler that skips hosts whose delay is too long compares the
// result with its cap itself.
func ApplyCrawlDelay(p *fetch.Politeness, host, token string, pol *Policy) (CrawlDelay, error) {
	d, err := pol.CrawlDelay(token)
	if err != nil {
		return CrawlDelay{}, err
	}
	p.SetCrawlDelay(host, d.Duration())
	return d, nil
}
