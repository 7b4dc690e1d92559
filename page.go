package crawlkit

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/crawlkit/crawlkit/archive/warc"
	"github.com/crawlkit/crawlkit/extract"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/usage"
)

// Page is a fetched page as the Handler sees it. The Handler may keep it;
// the Crawler does not touch it afterwards.
type Page struct {
	// URL is the normalized URL that was leased from the frontier;
	// FinalURL is the one that answered, after redirects, as the last hop
	// gave it (not normalized); links are resolved against it. A page
	// reached by redirects is handed on under URL, and its normalized
	// FinalURL is marked as seen, so that a link to it found later does
	// not fetch it again. One found before, and queued already, is not
	// fetched either when its turn comes, if this Run fetched it as a
	// redirect target of a page whose fetch succeeded (a 2xx, handed on
	// without a Handler error; Stats.URLs.FetchedByRedirect): the page is
	// handed on once, under the URL that redirected. A media URL's
	// redirect does not count. Another process sharing the
	// crawl (Config.Queue) or a Run after a restart may fetch it again.
	URL, FinalURL string
	// Depth is the number of links followed from a seed.
	Depth int
	// Data is what a Handler attached to this URL when it enqueued it
	// (Page.Enqueue); nil for links, seeds and sitemap entries.
	Data []byte
	// Attempt counts earlier attempts of this URL that were retried.
	Attempt int

	StatusCode int
	Header     http.Header
	// ContentType is the effective MIME type ("text/html"), sniffed when
	// the header was missing or wrong.
	ContentType string
	// Body is the decoded body; Truncated reports that it was cut at the
	// size limit.
	Body      []byte
	Truncated bool
	// Media reports a media resource (fetched because Config.MediaTypes
	// asked for its type) rather than a page.
	Media bool

	// Title, Description, Language, Canonical and Text come from the
	// HTML; Text is the visible text, folded and bounded.
	Title, Description, Language, Canonical, Text string
	// Links are the page's links in document order, resolved and
	// normalized; Followed marks the ones queued or already known.
	Links []Link
	// Noindex and Nofollow are the page's meta robots / X-Robots-Tag
	// directives for this crawler.
	Noindex, Nofollow bool
	// Usage is what the page's site says about how it may be used, from
	// robots.txt, the header, the HTML and tdmrep.json (Config.Usage);
	// empty when Config.Usage.Action is UsageOff.
	Usage usage.Signals

	// Fingerprint is the SimHash of Text. DuplicateOf is the URL of
	// another, earlier page whose fingerprint is within
	// Config.NearDuplicateBits (empty if none): a page fetched again is
	// not a duplicate of its own earlier fetch. With a DataDir the URLs
	// of fingerprinted pages are kept on disk; without one, in a bounded
	// map, and DuplicateOf is "(forgotten)" when the crawl has fetched so
	// many pages since that the map no longer names the original (or,
	// with a DataDir, when a crash lost its name). Distance is that
	// page's distance in bits.
	Fingerprint uint64
	DuplicateOf string
	Distance    int

	// Fetched is when the fetch started; Timing breaks its duration down.
	Fetched   time.Time
	Timing    fetch.Timing
	Redirects []fetch.Hop
	// RequestHeader holds the header of the final request as the fetcher
	// sent it (fetch.Response.RequestHeader: User-Agent, Accept,
	// Accept-Encoding, the configured headers, conditional headers and
	// cookies; not the Host, Connection and other fields the transport
	// adds), for archiving. Each hop's own is in Redirects. It is nil for
	// a page served fresh from Config.Cache, for which nothing was sent.
	RequestHeader http.Header
	// RemoteAddr is the address of the server that sent the final
	// response (fetch.Response.RemoteAddr), archived as WARC-IP-Address;
	// the zero value when it is unknown, as through a proxy. Each hop's
	// own is in Redirects.
	RemoteAddr netip.AddrPort
	// Wire is the final response as it was received (fetch.Wire: its
	// status line, TLS session and body with its content codings), kept
	// when Config.Sink is an ArchiveSink; nil otherwise.
	Wire *fetch.Wire

	finalURL   *url.URL        // FinalURL parsed, for the redirect target's admission
	doc        *pageDoc        // the parsed document, built on demand (HTML)
	md         *pageMD         // the main content as Markdown, built on demand (HTML)
	structured *pageStructured // Structured's result, made on demand (guarded by doc.mu)
}

// Link is one link of a page.
type Link struct {
	// URL is the normalized absolute URL; empty when it could not be
	// resolved or normalized (Err says why).
	URL string
	// Raw is the link as written in the page.
	Raw string
	// Kind names the element it came from (extract.KindA, KindImg, …).
	Kind extract.Kind
	// Text is the anchor or alt text (bounded).
	Text string
	// Rel holds the link relations a crawler acts on; Hreflang the
	// language of a rel=alternate translation.
	Rel      extract.Rel
	Hreflang string
	// Nofollow is set when the page does not let crawlers follow the
	// link: rel nofollow, ugc or sponsored, or a page-wide nofollow.
	Nofollow bool
	// Skip, set by the Handler, keeps the link from being queued
	// (ReasonSkipped): the Handler sees the page before its links are
	// queued.
	Skip bool
	// Priority, set by the Handler, ranks the link in the queue when it
	// is queued (frontier.Entry.Priority): with the default Prioritizer a
	// link with a Priority above zero goes into the most urgent band,
	// with the seeds, ahead of the links its depth would put first; a
	// Config.Prioritizer reads it as it likes (frontier.OPIC as cash,
	// the more the sooner). A negative or non-finite Priority is zero. A
	// link already queued or known keeps its place.
	Priority float64
	// Followed is set when the link was queued for fetching or was
	// already known to the crawl; Rejected says why it was not
	// ("scope", "depth", "nofollow", "media", a trap rule's reason,
	// "unsupported scheme", …). Both are set after the Handler returns
	// (the Sink sees them), except for the links of a page whose links
	// are not followed at all (a near-duplicate, a stopped trap).
	Followed bool
	Rejected string
}

// Sink receives every fetched page after the Handler, to archive or index
// it. Write is called concurrently from the crawler's workers; an error is
// logged and counted (Stats.SinkErrors), and does not fail the page.
type Sink interface {
	Write(ctx context.Context, p *Page) error
	// Close flushes the sink; Run calls it before returning.
	Close() error
}

// ArchiveSink is a Sink that archives responses as they were received,
// such as WARCSink. For one, the Crawler keeps each response's wire form
// (Page.Wire, fetch.Config.KeepWire) and hands it the robots.txt fetches
// as well, which an archive needs to replay a site as it was crawled.
type ArchiveSink interface {
	Sink
	// WriteRobots archives a robots.txt fetch that got an answer, started
	// at fetched. It is called concurrently, like Write; an error is
	// logged and counted as a sink error.
	WriteRobots(ctx context.Context, fetched time.Time, resp *fetch.Response) error
}

// WARCSink archives pages as WARC/1.1 files (see package warc): a request
// and a response record per fetch, revisit records for identical payloads
// and 304 answers. A page reached through redirects is archived with every
// hop first (each redirect response under the URL that gave it), so that
// replay of the URL that was requested finds its redirect.
//
// Each request record holds the header that request was sent with (the
// hop's fetch.Hop.RequestHeader, the page's RequestHeader for the final
// request; a hop without one is recorded with the page's), with the Host
// field taken from the URL. Each exchange's records carry WARC-IP-Address
// when the address that answered is known (fetch.Hop.RemoteAddr,
// Page.RemoteAddr). As an ArchiveSink it records each response as
// received (Page.Wire: content codings intact, WARC-Protocol and
// WARC-Cipher-Suite from the connection) and archives robots.txt fetches.
// A page with usage preferences (Page.Usage) gets a metadata record after
// its response (see writeUsage).
type WARCSink struct {
	w *warc.Writer
}

// NewWARCSink writes WARC files into opts.Dir.
func NewWARCSink(opts warc.Config) (*WARCSink, error) {
	w, err := warc.New(opts)
	if err != nil {
		return nil, err
	}
	return &WARCSink{w: w}, nil
}

// Write archives p, its redirect hops first.
func (s *WARCSink) Write(_ context.Context, p *Page) error {
	for _, h := range p.Redirects {
		if h.URL == nil {
			continue
		}
		date := h.Date
		if date.IsZero() {
			date = p.Fetched
		}
		reqHeader := h.RequestHeader
		if reqHeader == nil {
			reqHeader = p.RequestHeader
		}
		ex := &warc.Exchange{
			URL:           h.URL.String(),
			Date:          date,
			IP:            warcIPAddress(h.RemoteAddr),
			RequestHeader: reqHeader,
			StatusCode:    h.Status,
			Header:        h.Header,
		}
		if h.Wire != nil {
			// The redirect's body is not kept: the record has none.
			ex.Proto, ex.Reason, ex.TLS, ex.TransferEncoding = h.Wire.Proto, h.Wire.Reason, h.Wire.TLS, h.Wire.TransferEncoding
		}
		if _, err := s.w.WriteExchange(ex); err != nil {
			return err
		}
	}
	target := p.FinalURL
	if target == "" {
		target = p.URL
	}
	ex := &warc.Exchange{
		URL:           target,
		Date:          p.Fetched,
		IP:            warcIPAddress(p.RemoteAddr),
		RequestHeader: p.RequestHeader,
		StatusCode:    p.StatusCode,
		Header:        p.Header,
		Body:          p.Body,
		Truncated:     p.Truncated,
	}
	withWire(ex, p.Wire)
	res, err := s.w.WriteExchange(ex)
	if err != nil {
		return err
	}
	return s.writeUsage(p, target, res)
}

// WriteRobots archives a robots.txt fetch (ArchiveSink).
func (s *WARCSink) WriteRobots(_ context.Context, fetched time.Time, resp *fetch.Response) error {
	ex := &warc.Exchange{
		URL:           resp.FinalURL.String(),
		Date:          fetched,
		IP:            warcIPAddress(resp.RemoteAddr),
		RequestHeader: resp.RequestHeader,
		StatusCode:    resp.StatusCode,
		Proto:         resp.Proto,
		Header:        resp.Header,
		Body:          resp.Body,
		Truncated:     resp.Truncated,
	}
	withWire(ex, resp.Wire)
	_, err := s.w.WriteExchange(ex)
	return err
}

// withWire makes ex record the response as received, if w has it.
func withWire(ex *warc.Exchange, w *fetch.Wire) {
	if w == nil {
		return
	}
	ex.Proto, ex.Reason, ex.TLS, ex.TransferEncoding = w.Proto, w.Reason, w.TLS, w.TransferEncoding
	ex.WireBody, ex.Truncated = w.Body, w.Truncated
}

// warcIPAddress returns a WARC-IP-Address value for ap: its IP address, or ""
// when unknown.
func warcIPAddress(ap netip.AddrPort) string {
	if !ap.IsValid() {
		return ""
	}
	return ap.Addr().String()
}

// Writer returns the underlying WARC writer (for its Stats).
func (s *WARCSink) Writer() *warc.Writer { return s.w }

// Close finishes the current WARC file.
func (s *WARCSink) Close() error { return s.w.Close() }
