package fetch

import (
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// Sentinel errors returned (wrapped) by the Fetcher. Match them with errors.Is;
// the wrapping error says which URL, address or limit was involved.
var (
	// ErrNoUserAgent is returned by New when Config.UserAgent is empty. A
	// crawler must identify itself; include a way to contact the operator,
	// e.g. "examplebot/1.0 (+https://example.com/bot; bot@example.com)".
	ErrNoUserAgent = errors.New("fetch: User-Agent is required")

	// ErrBlockedAddress reports that the address guard refused to connect to
	// (or keep a connection to) an address that is not publicly routable.
	// The concrete error is a *BlockedAddressError.
	ErrBlockedAddress = errors.New("fetch: address blocked by guard")

	// ErrBodyTooLarge reports a body longer than Config.MaxBodyBytes when
	// Config.OnTooLarge is Fail.
	ErrBodyTooLarge = errors.New("fetch: body too large")

	// ErrDecompressionBomb reports a compressed body whose decoded size
	// exceeded Config.MaxExpansion times its size on the wire.
	ErrDecompressionBomb = errors.New("fetch: decompression bomb")

	// ErrUnsupportedEncoding reports a Content-Encoding the Fetcher cannot
	// decode, a chain of more than three encodings, or a zstd frame that
	// needs a window larger than the 8 MiB RFC 9659 allows for HTTP. It is
	// not retried.
	ErrUnsupportedEncoding = errors.New("fetch: unsupported content encoding")

	// ErrHeadersTooLarge reports response headers larger than
	// Config.MaxHeaderBytes. It is not retried. Over HTTP/2 net/http reports
	// it only for a header block that came in one frame; a larger block, or
	// a single field over the limit, ends the connection with a generic
	// HTTP/2 PROTOCOL_ERROR or COMPRESSION_ERROR, which is reported as it
	// comes (and retried like other connection failures).
	ErrHeadersTooLarge = errors.New("fetch: response headers too large")

	// ErrTooManyRedirects reports a redirect chain longer than
	// Config.MaxRedirects.
	ErrTooManyRedirects = errors.New("fetch: too many redirects")

	// ErrBadEncoding reports a body that does not decode as its
	// Content-Encoding says: not encoded at all ("gzip" over plain text),
	// corrupt, or cut short by the server (the connection delivered it
	// without failing). Bytes after a complete gzip, brotli or zstd stream
	// that do not start another gzip member or zstd frame are not an error:
	// they are ignored, as browsers ignore them. It is not retried, since
	// asking again gets the same bytes.
	ErrBadEncoding = errors.New("fetch: body does not decode as its Content-Encoding says")

	// ErrTimeout reports that a fetch ran out of time: connecting, waiting
	// for response headers, the per-attempt total (Config.Timeout, shared by
	// the requests of a redirect chain), or a transfer slower than
	// Config.MinTransferRate. The caller's own context ending is reported
	// with the context's error instead.
	ErrTimeout = errors.New("fetch: timeout")

	// ErrDisallowed reports that the caller's Config.Check refused a URL (the
	// first one or a redirect target), typically because robots.txt or the
	// crawl scope forbids it. The check's own error is wrapped too.
	ErrDisallowed = errors.New("fetch: disallowed by check")

	// ErrNotModified reports a 304 answer to a conditional request: the
	// resource did not change since the validators were issued. Fetch
	// returns it together with a non-nil Response.
	ErrNotModified = errors.New("fetch: not modified")

	// ErrHostBlocked reports that politeness forbids contacting the host for
	// longer than Config.MaxPolitenessWait (after a Retry-After, an error
	// backoff or an explicit block). The concrete error is a
	// *HostBlockedError carrying the time the host becomes ready.
	ErrHostBlocked = errors.New("fetch: host not ready")

	// ErrUnsupportedScheme reports a URL whose scheme is not http or https.
	ErrUnsupportedScheme = errors.New("fetch: unsupported URL scheme")

	// ErrClosed reports a fetch that was refused or cut short because the
	// Fetcher was closed (see Fetcher.Close).
	ErrClosed = errors.New("fetch: Fetcher closed")
)

// BlockedAddressError is the error the address guard returns. It matches
// ErrBlockedAddress with errors.Is.
type BlockedAddressError struct {
	Host   string     // the host name being dialled, if known
	Addr   netip.Addr // the refused address
	Reason string     // the class of the address, e.g. "loopback"
}

// Error names the refused host and address and why it was refused.
func (e *BlockedAddressError) Error() string {
	if !e.Addr.IsValid() {
		return fmt.Sprintf("fetch: address guard refused %s: %s address", e.Host, e.Reason)
	}
	if e.Host != "" && e.Host != e.Addr.String() {
		return fmt.Sprintf("fetch: address guard refused %s (%s): %s address", e.Host, e.Addr, e.Reason)
	}
	return fmt.Sprintf("fetch: address guard refused %s: %s address", e.Addr, e.Reason)
}

// Is makes errors.Is(err, ErrBlockedAddress) true.
func (e *BlockedAddressError) Is(target error) bool { return target == ErrBlockedAddress }

// HostBlockedError reports that a host may not be contacted before Until. It
// matches ErrHostBlocked with errors.Is.
type HostBlockedError struct {
	Host  string
	Until time.Time
}

// Error names the host and when it becomes ready.
func (e *HostBlockedError) Error() string {
	return fmt.Sprintf("fetch: host %s not ready until %s", e.Host, e.Until.UTC().Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrHostBlocked) true.
func (e *HostBlockedError) Is(target error) bool { return target == ErrHostBlocked }
