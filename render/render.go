// Package render runs the JavaScript of pages that need it, in headless
// Chromium, and returns the DOM the scripts built together with the links and
// text the extract package finds in it.
//
// Rendering costs one to two orders of magnitude more than a plain fetch, so a
// crawler renders only the pages that need it. Heuristic.Decide looks at the
// plain fetch of a page and says whether it does (little visible text under
// many scripts, an empty application root such as <div id="root"></div>, a
// noscript "enable JavaScript" message, the markers of client-side
// frameworks) and why; the crawler sends only those pages to a Renderer, with
// a concurrency limit of its own. The Renderer that drives a browser,
// chromium.Browser, lives in package render/chromium, so that a crawler
// that renders nothing does not link the DevTools protocol.
//
// The package lives at the top level rather than under fetch: it consumes the
// fetcher (through the small Fetcher interface) and the extractor, and it
// drives a browser process, which no user of fetch alone should have to think
// about. fetch does not know it exists.
package render

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/crawlkit/crawlkit/extract"
	"github.com/crawlkit/crawlkit/fetch"
)

// Errors returned by the package, matchable with errors.Is.
var (
	// ErrNoBrowser is returned by chromium.New when no Chromium executable is found.
	ErrNoBrowser = errors.New("render: no Chromium executable found")
	// ErrClosed is returned by Render after Close.
	ErrClosed = errors.New("render: renderer closed")
	// ErrTimeout is returned when a render took longer than its timeout.
	ErrTimeout = errors.New("render: render timed out")
	// ErrBadRequest is returned for a Request whose URL is not an absolute
	// http(s) URL.
	ErrBadRequest = errors.New("render: bad request")
	// ErrDocument is returned when the page itself could not be loaded
	// (its fetch failed or was refused).
	ErrDocument = errors.New("render: page could not be loaded")
	// ErrBrowserExited is returned by Render when the browser process
	// exited on its own (a crash, a kill for lack of memory) during the
	// render, or exited earlier and a new one could not be started yet.
	// The render may be tried again: a later one starts a new browser
	// (see chromium.Browser).
	ErrBrowserExited = errors.New("render: browser process exited")
)

// Renderer renders pages. chromium.Browser is the implementation; a test may supply
// its own.
type Renderer interface {
	Render(ctx context.Context, req *Request) (*Result, error)
}

// Fetcher makes the requests of the browser. *fetch.Fetcher implements it,
// with its address guard, Check (robots.txt, scope), politeness, limits and
// decompression; the Fetcher should follow redirects itself, since the
// browser is handed the final response.
type Fetcher interface {
	Do(ctx context.Context, req *fetch.Request) (*fetch.Response, error)
}

// Request is one page to render.
type Request struct {
	// URL is the absolute http(s) URL of the page.
	URL string
	// Body and Header are the page as already fetched: the browser is
	// answered from them instead of fetching the page again. A nil Body
	// makes the renderer fetch the page through its Fetcher.
	Body   []byte
	Header http.Header
	// StatusCode is the status of the fetched page (default 200).
	StatusCode int
	// Fetcher, if set, makes this render's requests instead of the
	// renderer's own (Chromium's Config.Fetcher): a crawler passes one
	// that applies its robots.txt check and records into its politeness.
	Fetcher Fetcher
}

// Result is a rendered page.
type Result struct {
	// URL is the document's URL when the render ended (a script may have
	// changed it with history.pushState).
	URL string
	// HTML is the serialized DOM after the scripts ran, at most
	// Config.MaxPageBytes long (Truncated says whether it was cut).
	HTML []byte
	// Document is what extract found in HTML: links, text, title, robots
	// directives.
	Document *extract.Document
	// Requests counts the subresource requests made through the Fetcher;
	// Skipped counts those not made because of their resource type
	// (Config.SkipTypes); Bytes counts the body bytes handed to the
	// browser, the page included.
	Requests, Skipped int
	Bytes             int64
	// Blocked lists requests that were refused, in the order they were
	// refused, at most 256 of them; BlockedTotal counts them all.
	Blocked      []Blocked
	BlockedTotal int
	// Navigations lists the URLs the page tried to navigate its main frame
	// to (location.href = …, form submissions); the navigation is refused,
	// and a crawler may treat them as links.
	Navigations []string
	// Truncated reports that a limit cut the render short: the request
	// cap, the page weight cap, or the DOM's size.
	Truncated bool
	// Duration is how long the render took, waiting for a tab included.
	Duration time.Duration
}

// Reason says why a request of the browser was refused.
type Reason string

// Reasons for refusing a request.
const (
	// ReasonAddress: the address guard refused the target address
	// (loopback, private, link-local, …).
	ReasonAddress Reason = "address"
	// ReasonDisallowed: the Fetcher's Check refused the URL (robots.txt,
	// crawl scope).
	ReasonDisallowed Reason = "disallowed"
	// ReasonPoliteness: the host may not be contacted before the render's
	// deadline (Crawl-delay, backoff, Retry-After).
	ReasonPoliteness Reason = "politeness"
	// ReasonMethod: a method other than GET or HEAD; a crawler does not
	// submit forms or post data.
	ReasonMethod Reason = "method"
	// ReasonScheme: a scheme other than http and https.
	ReasonScheme Reason = "scheme"
	// ReasonRequestCap: the render's subresource request cap was reached.
	ReasonRequestCap Reason = "request cap"
	// ReasonWeightCap: the render's page weight cap was reached.
	ReasonWeightCap Reason = "weight cap"
	// ReasonNavigation: the page tried to navigate its main frame away.
	ReasonNavigation Reason = "navigation"
	// ReasonFailed: the fetch failed (network error, timeout, bad
	// response).
	ReasonFailed Reason = "failed"
)

// Blocked is one refused request.
type Blocked struct {
	URL    string
	Method string
	// Type is the browser's resource type ("Script", "XHR", "Fetch",
	// "Document", …).
	Type   string
	Reason Reason
	// Err is the Fetcher's error, for ReasonAddress, ReasonDisallowed,
	// ReasonPoliteness and ReasonFailed.
	Err error
}

// MaxBlocked bounds Result.Blocked.
const MaxBlocked = 256
