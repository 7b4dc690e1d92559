package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"slices"
	"time"

	"github.com/crawlkit/crawlkit/sitemap"
)

// sitemapCase is one case of sitemaps.json (the schema is described in the README of the conformance data directory).
type sitemapCase struct {
	ID               string             `json:"id"`
	Source           string             `json:"source"`
	Category         string             `json:"category"`
	Note             string             `json:"note"`
	ContentType      string             `json:"content_type"`
	Body             *string            `json:"body"`
	BodyB64          string             `json:"body_b64"`
	SitemapURL       string             `json:"sitemap_url"`
	ExpectedURLs     []string           `json:"expected_urls"`
	ExpectedSitemaps []string           `json:"expected_sitemaps"`
	ExpectedLastmod  map[string]*string `json:"expected_lastmod"`
	ExpectedError    bool               `json:"expected_error"`
	AcceptError      bool               `json:"accept_error"`
}

func init() {
	register("sitemaps", runSitemaps)
}

func runSitemaps(data []byte) ([]result, error) {
	cases, err := decodeCases[sitemapCase](data)
	if err != nil {
		return nil, err
	}
	results := make([]result, 0, len(cases))
	for _, c := range cases {
		results = append(results, runSitemapCase(c))
	}
	return results, nil
}

func runSitemapCase(c sitemapCase) result {
	var body []byte
	switch {
	case c.Body != nil:
		body = []byte(*c.Body)
	case c.BodyB64 != "":
		b, err := base64.StdEncoding.DecodeString(c.BodyB64)
		if err != nil {
			return result{id: c.ID, detail: fmt.Sprintf("case body_b64 does not decode: %v", err)}
		}
		body = b
	}
	// The Content-Type is deliberately not passed: the parser detects the
	// format from the content, which is what the content-type cases check.
	entries, _, err := sitemap.Collect(bytes.NewReader(body), sitemap.Source{URL: c.SitemapURL})
	if c.ExpectedError {
		if err == nil {
			return result{id: c.ID, detail: fmt.Sprintf("expected an error, got %d entries and no error", len(entries))}
		}
		return result{id: c.ID, ok: true}
	}
	if err != nil {
		if c.AcceptError {
			return result{id: c.ID, ok: true}
		}
		return result{id: c.ID, detail: "expected no error, got " + quote(err)}
	}
	urls, maps := []string{}, []string{}
	lastmod := map[string]time.Time{} // the zero Time when absent or invalid
	for _, e := range entries {
		if e.Kind == sitemap.KindSitemap {
			maps = append(maps, e.URL)
		} else {
			urls = append(urls, e.URL)
		}
		lastmod[e.URL] = e.LastMod
	}
	want := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	if !slices.Equal(urls, want(c.ExpectedURLs)) {
		return result{id: c.ID, detail: fmt.Sprintf("urls: expected %s, got %s", quote(want(c.ExpectedURLs)), quote(urls))}
	}
	if !slices.Equal(maps, want(c.ExpectedSitemaps)) {
		return result{id: c.ID, detail: fmt.Sprintf("sitemaps: expected %s, got %s", quote(want(c.ExpectedSitemaps)), quote(maps))}
	}
	for u, w := range c.ExpectedLastmod {
		g, listed := lastmod[u]
		if !listed {
			return result{id: c.ID, detail: fmt.Sprintf("lastmod of %s: URL not returned", u)}
		}
		if w == nil {
			if !g.IsZero() {
				return result{id: c.ID, detail: fmt.Sprintf("lastmod of %s: expected null, got %s", u, formatLastMod(g))}
			}
			continue
		}
		// The expectation is an instant: compared as one, to the
		// nanosecond, so a fractional second counts and "…15.50Z" and
		// "…15.5Z" are the same time.
		wt, err := time.Parse(time.RFC3339Nano, *w)
		if err != nil {
			return result{id: c.ID, detail: fmt.Sprintf("case expected_lastmod of %s is not RFC 3339: %v", u, err)}
		}
		if !g.Equal(wt) || (!g.IsZero() && g.Location() != time.UTC) {
			return result{id: c.ID, detail: fmt.Sprintf("lastmod of %s: expected %s, got %s", u, quote(*w), formatLastMod(g))}
		}
	}
	return result{id: c.ID, ok: true}
}

// formatLastMod renders an Entry's LastMod for a FAIL line: RFC 3339 with
// any fractional second, in the Time's own zone, or null for the zero Time.
func formatLastMod(t time.Time) string {
	if t.IsZero() {
		return "null"
	}
	return quote(t.Format(time.RFC3339Nano))
}
