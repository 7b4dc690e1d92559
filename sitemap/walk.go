package sitemap

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Walk defaults.
const (
	// DefaultMaxDepth allows a robots.txt-listed index (depth 0), its
	// sitemaps (depth 1) and up to two further levels of nested indexes,
	// which sitemaps.org forbids but large sites publish anyway.
	DefaultMaxDepth = 3
	// DefaultMaxSitemapsPerHost bounds how many documents one host name can
	// make a walk fetch, whatever its schemes and ports: at 50,000 URLs
	// each, 1,000 sitemaps list 50 million URLs.
	DefaultMaxSitemapsPerHost = 1000
	// DefaultMaxSitemaps bounds the documents one walk fetches over all
	// hosts, so that many sources (or hosts) cannot multiply the per-host
	// budget without end.
	DefaultMaxSitemaps = 10000
	// DefaultDocumentTimeout bounds the fetch and parse of one document, so
	// that a server trickling its response cannot hold a walk forever.
	DefaultDocumentTimeout = 60 * time.Second
)

// Errors a Walker reports through OnError for sitemaps it does not fetch.
var (
	// ErrTooDeep reports a child sitemap beyond Walker.MaxDepth.
	ErrTooDeep = errors.New("sitemap: index nesting exceeds the depth limit")
	// ErrHostBudget reports a sitemap beyond Walker.MaxSitemapsPerHost.
	ErrHostBudget = errors.New("sitemap: host exceeds its sitemap budget")
	// ErrWalkBudget reports a sitemap beyond Walker.MaxSitemaps.
	ErrWalkBudget = errors.New("sitemap: walk exceeds its sitemap budget")
	// ErrDocumentTimeout reports a document that was not fetched and parsed
	// within Walker.DocumentTimeout. Entries parsed before it have been
	// delivered.
	ErrDocumentTimeout = errors.New("sitemap: document not read within the time limit")
)

// FetchFunc retrieves the document at rawURL; the Walker closes the body.
// Any transport, cache or politeness layer can stand behind it. Both the
// call and reads from the body must give up when ctx is done, as those of an
// http.Client do: ctx carries the Walker's per-document deadline.
type FetchFunc func(ctx context.Context, rawURL string) (io.ReadCloser, error)

// StatusError reports an HTTP response that is not 2xx.
type StatusError struct {
	URL        string
	StatusCode int
}

// Error says which URL answered with which status.
func (e *StatusError) Error() string {
	return fmt.Sprintf("sitemap: GET %s: HTTP status %d", e.URL, e.StatusCode)
}

// HTTPFetch returns a FetchFunc that GETs through client
// (http.DefaultClient when nil), sending userAgent when not empty. Responses
// other than 2xx give a *StatusError. The body is not limited here: the
// Parser caps its size, and the Walker's per-document deadline, carried by
// ctx, its time.
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
// Walk (cycle detection), nesting is bounded by MaxDepth, no host name gets
// more than MaxSitemapsPerHost documents fetched, no walk more than
// MaxSitemaps, and each document must be read within DocumentTimeout. Zero
// fields take the defaults; Fetch is required.
//
// Memory stays bounded by the budgets, not by what indexes list: only the
// sitemaps that will be fetched are remembered for cycle detection, as a
// 64-bit hash of their URL, and the children an index lists beyond a limit
// are counted and reported once for that index, not one by one.
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
	// MaxSitemapsPerHost bounds the documents fetched per host name: the
	// same host on another scheme or port shares the budget. Default
	// DefaultMaxSitemapsPerHost.
	MaxSitemapsPerHost int
	// MaxSitemaps bounds the documents fetched by one Walk. Default
	// DefaultMaxSitemaps.
	MaxSitemaps int
	// DocumentTimeout bounds the fetch and parse of each document,
	// including the time spent in Walk's callback for its entries; the
	// document then fails with ErrDocumentTimeout. Default
	// DefaultDocumentTimeout.
	DocumentTimeout time.Duration
	// Follow, when set, decides whether a child sitemap listed by an index
	// is fetched; a recrawl can skip children whose LastMod predates its
	// previous visit.
	Follow func(child Entry) bool
	// OnError, when set, is told about every sitemap that failed to fetch or
	// parse, and about every source skipped for a limit. The children of an
	// index skipped for limits are reported together, in one call with the
	// index's URL and an error that counts them and wraps ErrTooDeep,
	// ErrHostBudget or ErrWalkBudget (several, joined, when several limits
	// applied). A failing sitemap never stops the walk; entries parsed
	// before a document's error have been delivered.
	OnError func(sitemapURL string, err error)
}

// WalkStats summarises a walk.
type WalkStats struct {
	// Fetched counts documents fetched; Failed those whose fetch or parse
	// failed; Skipped the sources and child listings not fetched for depth
	// or budget (a child listed twice beyond a limit counts twice);
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
	l := w.limits()
	// seen holds a hash of the walkKey of every sitemap queued, and only of
	// those: what an index lists beyond the limits is not remembered, so the
	// set is bounded by MaxSitemaps. The seed is random, so a site cannot
	// craft a URL whose hash collides with another site's sitemap.
	seed := maphash.MakeSeed()
	seen := make(map[uint64]struct{})
	perHost := make(map[string]int)
	var queue []walkItem
	// enqueue queues it unless it was queued before, and returns the limit
	// (ErrTooDeep, ErrHostBudget or ErrWalkBudget) that stops it, if any.
	enqueue := func(it walkItem) error {
		key, host := walkKey(it.src.URL)
		if key == "" {
			st.Failed++
			w.report(it.src.URL, fmt.Errorf("%w: %q", ErrInvalidSource, it.src.URL))
			return nil
		}
		h := maphash.String(seed, key)
		if _, ok := seen[h]; ok {
			st.Repeated++
			return nil
		}
		var limit error
		switch {
		case it.depth > l.maxDepth:
			limit = ErrTooDeep
		case perHost[host] >= l.perHost:
			limit = ErrHostBudget
		case len(seen) >= l.total:
			limit = ErrWalkBudget
		}
		if limit != nil {
			st.Skipped++
			return limit
		}
		seen[h] = struct{}{}
		perHost[host]++
		queue = append(queue, it)
		return nil
	}
	for _, s := range sources {
		if limit := enqueue(walkItem{src: s}); limit != nil {
			w.report(s.URL, fmt.Errorf("%w (%d)", limit, l.of(limit)))
		}
	}
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		it := queue[0]
		queue[0] = walkItem{}
		queue = queue[1:]
		var skips skipTally
		dctx, cancel := context.WithTimeout(ctx, l.timeout)
		fetched, err := w.read(dctx, it.src, func(e Entry) error {
			if e.Kind == KindSitemap {
				if w.Follow == nil || w.Follow(e) {
					skips.add(enqueue(walkItem{src: Source{URL: e.URL, RobotsOrigin: it.src.RobotsOrigin}, depth: it.depth + 1}))
				}
				return nil
			}
			st.Pages++
			if err := fn(it.src.URL, e); err != nil {
				return &walkStop{err}
			}
			return nil
		})
		timedOut := dctx.Err() != nil
		cancel()
		if fetched {
			st.Fetched++
		}
		var stop *walkStop
		if errors.As(err, &stop) {
			return st, stop.err
		}
		if err != nil {
			if ctx.Err() != nil {
				return st, ctx.Err()
			}
			if timedOut {
				// Whatever failed, failed because the deadline cut it
				// short; the transport's own error would only obscure that.
				err = fmt.Errorf("%w (%v)", ErrDocumentTimeout, l.timeout)
			}
			st.Failed++
			w.report(it.src.URL, err)
		}
		if err := skips.err(l); err != nil {
			w.report(it.src.URL, err)
		}
	}
	return st, nil
}

// read fetches and parses one document under ctx, which carries the
// document's deadline; fetched reports that Fetch succeeded.
func (w *Walker) read(ctx context.Context, src Source, fn func(Entry) error) (fetched bool, err error) {
	body, err := w.Fetch(ctx, src.URL)
	if err != nil {
		return false, err
	}
	defer body.Close()
	_, err = w.Parser.Parse(&ctxReader{ctx: ctx, r: body}, src, fn)
	return true, err
}

// ctxReader stops reading once ctx is done, for a body that keeps
// delivering data although its FetchFunc ignores ctx.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// walkLimits are a Walker's limits with the defaults applied.
type walkLimits struct {
	maxDepth, perHost, total int
	timeout                  time.Duration
}

func (w *Walker) limits() walkLimits {
	l := walkLimits{maxDepth: w.MaxDepth, perHost: w.MaxSitemapsPerHost, total: w.MaxSitemaps, timeout: w.DocumentTimeout}
	if l.maxDepth <= 0 {
		l.maxDepth = DefaultMaxDepth
	}
	if l.perHost <= 0 {
		l.perHost = DefaultMaxSitemapsPerHost
	}
	if l.total <= 0 {
		l.total = DefaultMaxSitemaps
	}
	if l.timeout <= 0 {
		l.timeout = DefaultDocumentTimeout
	}
	return l
}

// of returns the value of the limit that err, a limit error, stands for.
func (l walkLimits) of(limit error) int {
	switch limit {
	case ErrTooDeep:
		return l.maxDepth
	case ErrHostBudget:
		return l.perHost
	}
	return l.total
}

// skipTally counts, per limit, the children of one index that were not
// queued, so that they are reported in one call rather than one each: an
// index may list 50,000 of them.
type skipTally struct{ depth, host, total int }

func (t *skipTally) add(limit error) {
	switch limit {
	case ErrTooDeep:
		t.depth++
	case ErrHostBudget:
		t.host++
	case ErrWalkBudget:
		t.total++
	}
}

// err describes the tally, or returns nil when nothing was skipped.
func (t *skipTally) err(l walkLimits) error {
	var errs []error
	for _, c := range []struct {
		n     int
		limit error
	}{{t.depth, ErrTooDeep}, {t.host, ErrHostBudget}, {t.total, ErrWalkBudget}} {
		if c.n > 0 {
			errs = append(errs, fmt.Errorf("%w (%d): %d listed sitemaps not fetched", c.limit, l.of(c.limit), c.n))
		}
	}
	return errors.Join(errs...)
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
// without the fragment. host is the host name the budget is kept for.
func walkKey(raw string) (key, host string) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", ""
	}
	origin := originOf(u)
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
	return key, hostOf(u)
}
