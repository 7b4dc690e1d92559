package sitemap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Walk defaults.
const (
	// DefaultMaxDepth allows a robots.txt-listed index (depth 0), its
	// sitemaps (depth 1) and up to two further levels of nested indexes,
	// which sitemaps.org forbids but large sites publish anyway.
	DefaultMaxDepth = 3
	// DefaultMaxSitemapsPerHost bounds how many documents one host can make
	// a walk fetch: at 50,000 URLs each, 1,000 sitemaps list 50 million URLs.
	DefaultMaxSitemapsPerHost = 1000
)

// Errors a Walker reports through OnError for sitemaps it does not fetch.
var (
	// ErrTooDeep reports a child sitemap beyond Walker.MaxDepth.
	ErrTooDeep = errors.New("sitemap: index nesting exceeds the depth limit")
	// ErrHostBudget reports a sitemap beyond Walker.MaxSitemapsPerHost.
	ErrHostBudget = errors.New("sitemap: host exceeds its sitemap budget")
)

// FetchFunc retrieves the document at rawURL; the Walker closes the body.
// Any transport, cache or politeness layer can stand behind it.
type FetchFunc func(ctx context.Context, rawURL string) (io.ReadCloser, error)

// StatusError reports an HTTP response that is not 2xx.
type StatusError struct {
	URL        string
	StatusCode int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("sitemap: GET %s: HTTP status %d", e.URL, e.StatusCode)
}

// HTTPFetch returns a FetchFunc that GETs through client
// (http.DefaultClient when nil), sending userAgent when not empty. Responses
// other than 2xx give a *StatusError. The body is not limited here: the
// Parser caps it.
func HTTPFetch(client *http.Client, userAgent string) FetchFunc {
	if client == nil {
		client = http.DefaultClient
	}
	return func(ctx context.Context, rawURL string) (io.ReadCloser, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
		if err != nil {
			return nil, err
		}
		if userAgent != "" {
			req.Header.Set("User-Agent", userAgent)
		}
		req.Header.Set("Accept", "application/xml, text/xml;q=0.9, text/plain;q=0.8, */*;q=0.5")
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			// Drain a little so the connection can be reused.
			io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
			resp.Body.Close()
			return nil, &StatusError{URL: rawURL, StatusCode: resp.StatusCode}
		}
		return resp.Body, nil
	}
}

// Walker fetches sitemaps and follows sitemap indexes, sequentially and
// without goroutines of its own. Each sitemap is fetched at most once per
// Walk (cycle detection), nesting is bounded by MaxDepth, and no host gets
// more than MaxSitemapsPerHost documents fetched. Zero fields take the
// defaults; Fetch is required.
//
// A child sitemap's scope is decided by the URL it was requested at, not
// where a redirect took it: a redirect to another host does not widen what
// the sitemap may list.
type Walker struct {
	// Parser parses each document; its limits apply per document.
	Parser Parser
	// Fetch retrieves a document, e.g. HTTPFetch(client, "MyBot/1.0").
	Fetch FetchFunc
	// MaxDepth bounds index nesting; sources have depth 0.
	MaxDepth int
	// MaxSitemapsPerHost bounds the documents fetched per origin.
	MaxSitemapsPerHost int
	// Follow, when set, decides whether a child sitemap listed by an index
	// is fetched; a recrawl can skip children whose LastMod predates its
	// previous visit.
	Follow func(child Entry) bool
	// OnError, when set, is told about every sitemap that failed to fetch or
	// parse, or was skipped for a limit. A failing sitemap never stops the
	// walk; entries parsed before a document's error have been delivered.
	OnError func(sitemapURL string, err error)
}

// WalkStats summarises a walk.
type WalkStats struct {
	// Fetched counts documents fetched; Failed those whose fetch or parse
	// failed; Skipped those not fetched for depth or host budget;
	// Repeated the child listings of a sitemap already fetched or queued.
	Fetched, Failed, Skipped, Repeated int
	// Pages counts page entries delivered.
	Pages int
}

type walkItem struct {
	src   Source
	depth int
}

// Walk fetches the sources and, breadth first, the sitemaps their indexes
// list, calling fn with each page entry and the URL of the sitemap that
// listed it. It returns early with ctx's error when ctx is done, or with fn's
// error, unwrapped, when fn fails.
func (w *Walker) Walk(ctx context.Context, sources []Source, fn func(sitemapURL string, e Entry) error) (WalkStats, error) {
	var st WalkStats
	if w.Fetch == nil {
		return st, errors.New("sitemap: Walker.Fetch is nil")
	}
	maxDepth := w.MaxDepth
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	budget := w.MaxSitemapsPerHost
	if budget <= 0 {
		budget = DefaultMaxSitemapsPerHost
	}
	seen := make(map[string]bool)
	perHost := make(map[string]int)
	var queue []walkItem
	enqueue := func(it walkItem) {
		key, origin := walkKey(it.src.URL)
		if key == "" {
			st.Failed++
			w.report(it.src.URL, fmt.Errorf("%w: %q", ErrInvalidSource, it.src.URL))
			return
		}
		if seen[key] {
			st.Repeated++
			return
		}
		seen[key] = true
		if it.depth > maxDepth {
			st.Skipped++
			w.report(it.src.URL, fmt.Errorf("%w (%d)", ErrTooDeep, maxDepth))
			return
		}
		if perHost[origin] >= budget {
			st.Skipped++
			w.report(it.src.URL, fmt.Errorf("%w (%d)", ErrHostBudget, budget))
			return
		}
		perHost[origin]++
		queue = append(queue, it)
	}
	for _, s := range sources {
		enqueue(walkItem{src: s})
	}
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		it := queue[0]
		queue[0] = walkItem{}
		queue = queue[1:]
		body, err := w.Fetch(ctx, it.src.URL)
		if err != nil {
			if ctx.Err() != nil {
				return st, ctx.Err()
			}
			st.Failed++
			w.report(it.src.URL, err)
			continue
		}
		st.Fetched++
		_, err = w.Parser.Parse(body, it.src, func(e Entry) error {
			if e.Kind == KindSitemap {
				if w.Follow == nil || w.Follow(e) {
					enqueue(walkItem{src: Source{URL: e.URL, RobotsOrigin: it.src.RobotsOrigin}, depth: it.depth + 1})
				}
				return nil
			}
			st.Pages++
			if err := fn(it.src.URL, e); err != nil {
				return &walkStop{err}
			}
			return nil
		})
		body.Close()
		var stop *walkStop
		if errors.As(err, &stop) {
			return st, stop.err
		}
		if err != nil {
			if ctx.Err() != nil {
				return st, ctx.Err()
			}
			st.Failed++
			w.report(it.src.URL, err)
		}
	}
	return st, nil
}

// walkStop carries the error of Walk's callback out of Parser.Parse.
type walkStop struct{ err error }

func (e *walkStop) Error() string { return e.err.Error() }

func (w *Walker) report(u string, err error) {
	if w.OnError != nil {
		w.OnError(u, err)
	}
}

// walkKey identifies a sitemap for cycle detection: origin, path and query,
// without the fragment.
func walkKey(raw string) (key, origin string) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", ""
	}
	origin = originOf(u)
	if origin == "" {
		return "", ""
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	key = origin + p
	if u.RawQuery != "" {
		key += "?" + u.RawQuery
	}
	return key, origin
}
