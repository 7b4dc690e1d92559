package fetch

import (
	"net/http"
	"net/netip"
	"net/url"
	"time"
)

// Request is one fetch. Only URL is required.
type Request struct {
	// URL is the absolute http or https URL to fetch.
	URL string
	// Method is GET (the default), HEAD or POST. A crawl's page requests
	// are GET or HEAD only; POST is for an explicit exchange such as a
	// login form (crawlkit.Session), with Body as its content: it is not
	// retried (RFC 9110 §9.2.2), a 301 or 302 answer to it is followed
	// with a GET and a 307 or 308 with the POST again.
	Method string
	// Body is the content of a POST (nil: none); its Content-Type goes
	// in Header. Other methods refuse a Body.
	Body []byte
	// Header holds extra request headers; they override the Fetcher's
	// defaults except User-Agent and the conditional and encoding headers
	// the Fetcher manages. Keys need not be canonical. Host,
	// Content-Length, Transfer-Encoding and Trailer are ignored, as
	// net/http ignores them in a request's Header.
	Header http.Header
	// Validators from a previous fetch of URL make the request conditional
	// (RFC 9110 §13.1): a 304 answer is reported as ErrNotModified.
	Validators Validators
}

// Validators are a response's cache validators (RFC 9110 §8.8), kept by a
// recrawling caller and sent back with the next request for the same URL.
type Validators struct {
	ETag         string // sent as If-None-Match
	LastModified string // sent as If-Modified-Since
}

// IsZero reports whether v holds no validator.
func (v Validators) IsZero() bool { return v.ETag == "" && v.LastModified == "" }

// Hop is one redirect in a chain: URL answered with Status and pointed on.
type Hop struct {
	URL    *url.URL
	Status int
	// Header is the redirect response's header (Location among it), as
	// received; Date is when its request started. An archive records the
	// hop from them (see crawlkit.WARCSink).
	Header http.Header
	Date   time.Time
	// RemoteAddr and RequestHeader describe the hop's request as
	// Response.RemoteAddr and Response.RequestHeader describe the final
	// one: the address that answered it (zero when unknown) and the
	// header it was sent with.
	RemoteAddr    netip.AddrPort
	RequestHeader http.Header
	// Wire is the hop's response as received (Config.KeepWire), without
	// its body; nil unless KeepWire.
	Wire *Wire
}

// Timing breaks down the time of the final request of a fetch (the last
// redirect hop of the last attempt). DNS, Connect and TLS are zero when a
// kept-alive connection was reused.
type Timing struct {
	DNS       time.Duration // name lookup through the DNS cache
	Connect   time.Duration // TCP connect
	TLS       time.Duration // TLS handshake
	FirstByte time.Duration // from the start of the request to its response headers
	Total     time.Duration // the whole request, body included
	Reused    bool          // the connection was kept alive from an earlier request
}

// Response is a fetched resource.
type Response struct {
	// URL is the requested URL; FinalURL is the one that answered, after
	// following Redirects (the same as URL when there were none).
	URL, FinalURL *url.URL
	Redirects     []Hop

	StatusCode int
	Proto      string
	Header     http.Header

	// RemoteAddr is the IP address and port at the other end of the
	// connection that carried the final response (a WARC record's
	// WARC-IP-Address), whether the connection was new or kept alive.
	// It is the zero AddrPort (IsValid false) when the Fetcher cannot
	// know the server's address: when the request went through a proxy
	// set as the transport's Proxy (the connection is then the proxy's),
	// and with a Config.Transport that is not an *http.Transport and does
	// not report its connections through net/http/httptrace. With a
	// Config.DialContext it is the address of the connection the dial
	// function returned, which for a dial function that tunnels through
	// a proxy (SOCKS, say) is the proxy's.
	RemoteAddr netip.AddrPort
	// RequestHeader is the header of the final request as the Fetcher
	// handed it to the transport: User-Agent, Accept, Accept-Encoding,
	// Config.Header, Request.Header, the conditional headers
	// (If-None-Match, If-Modified-Since) of a recrawl, and the cookies of
	// Client.Jar, less the credential headers a redirect dropped. The
	// fields the transport adds while writing the request are not in it:
	// Host (always the URL's host), Connection, Content-Length,
	// Proxy-Authorization sent to a proxy, an Authorization header made
	// from userinfo in the URL, and HTTP/2's pseudo-header fields. Its
	// value slices may be shared with Request.Header and Config.Header:
	// do not modify them.
	RequestHeader http.Header

	// Body is the decoded body (Content-Encoding removed), at most
	// Config.MaxBodyBytes long; Truncated says whether it was cut there.
	Body      []byte
	Truncated bool
	// WireBytes counts body bytes as received (after transfer decoding,
	// before content decoding); Body holds len(Body) decoded bytes.
	WireBytes int64
	// ContentEncoding lists the codings that were removed, in the order
	// the server applied them.
	ContentEncoding []string
	// Wire is the response as received, for an archive: set when
	// Config.KeepWire is, nil otherwise.
	Wire *Wire

	// ContentType is the effective MIME type essence ("text/html"), from the
	// header unless sniffing overruled it (Sniffed); DeclaredType is the
	// header's own, possibly empty; Charset is the header's charset
	// parameter when the header's type is used.
	ContentType, DeclaredType, Charset string
	Sniffed                            bool

	// NotModified is set for a 304 answer to a conditional request.
	NotModified bool
	// Attempts is the number of attempts made (1 without retries).
	Attempts int
	Timing   Timing
}

// Validators returns the response's cache validators for a later
// conditional request.
func (r *Response) Validators() Validators {
	return Validators{ETag: r.Header.Get("ETag"), LastModified: r.Header.Get("Last-Modified")}
}
