package crawlkit

import (
	"context"
	"errors"
	"net/http"
)

// Hooks around a page request: Config.HostHeader adds headers (an API
// key, Authorization) to one host's requests, BeforeRequest sees each page
// request before it is sent and may change its headers or skip it, and
// OnError hears of each fetch that got no answer. The Handler is the
// after-response hook: it sees every answer, whatever its status.

// Request is a page request about to be sent, for Config.BeforeRequest.
type Request struct {
	// URL is the leased, normalized URL; Depth and Data are its Page's.
	URL   string
	Depth int
	Data  []byte
	// Header holds the request's own headers, on top of Config.Header:
	// Config.HostHeader's for its host, and whatever the hook sets. They
	// are dropped on a redirect to another host or from https to http
	// where they are credentials (Authorization, Cookie; see
	// fetch.Config.Header).
	Header http.Header
}

// ErrSkip, returned by Config.BeforeRequest, leaves the URL unfetched
// (ReasonSkipped).
var ErrSkip = errors.New("crawlkit: skip this URL")

// beforeRequest builds the request header of l's URL and runs the
// BeforeRequest hook. why is ReasonSkipped for ErrSkip; err is the hook's
// other error (the URL is tried again later).
func (cr *Crawler) beforeRequest(ctx context.Context, url, host string, depth int, data []byte) (h http.Header, why Reason, err error) {
	if hh := cr.cfg.HostHeader[host]; hh != nil {
		h = hh.Clone()
	}
	if cr.cfg.BeforeRequest == nil {
		return h, reasonNone, nil
	}
	if h == nil {
		h = http.Header{}
	}
	r := &Request{URL: url, Depth: depth, Data: data, Header: h}
	err = callRecovered("before-request", func() error { return cr.cfg.BeforeRequest(ctx, r) })
	switch {
	case errors.Is(err, ErrSkip):
		return nil, ReasonSkipped, nil
	case err != nil:
		return nil, reasonNone, err
	}
	return r.Header, reasonNone, nil
}

// onError tells Config.OnError of a fetch of url that got no answer.
func (cr *Crawler) onError(ctx context.Context, url string, err error) {
	if cr.cfg.OnError == nil || err == nil {
		return
	}
	if perr := callRecovered("on-error", func() error { cr.cfg.OnError(ctx, url, err); return nil }); perr != nil {
		cr.cfg.Logger.Error("OnError panicked", "url", url, "err", perr)
	}
}

// BasicAuth returns the header of HTTP Basic authentication (RFC 7617) for
// Config.HostHeader.
func BasicAuth(user, password string) http.Header {
	r := &http.Request{Header: http.Header{}}
	r.SetBasicAuth(user, password)
	return r.Header
}

// BearerAuth returns the header of a bearer token (RFC 6750) for
// Config.HostHeader.
func BearerAuth(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}}
}
