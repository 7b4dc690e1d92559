package crawlkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// A Session is the crawl's HTTP client as a Config.Login function sees it:
// its requests go through the crawl's cookie jar, the address guard, the
// global rate cap and each host's politeness (they count toward its
// spacing), and the cookies their answers set are sent with the host's
// page requests afterwards. They are not checked against robots.txt or
// the crawl's scope: they are the operator's own requests, not a crawl of
// discovered URLs, and a login form is often on a path robots.txt keeps
// out of search engines. They are not retried.
type Session struct {
	cr   *Crawler
	host string
	base *url.URL // scheme and host of the URL whose lease asked for the login
}

// ErrLogin is wrapped by the errors of a Session's requests that were not
// sent (a URL that is not http or https, a value that does not encode),
// and by the error a failed Config.Login leaves its host's URLs with.
var ErrLogin = errors.New("crawlkit: login")

// SessionResponse is the answer to a Session request, after redirects.
type SessionResponse struct {
	// URL is the URL that answered (the last redirect's target).
	URL        string
	StatusCode int
	Header     http.Header
	// Body is the decoded body, at most Config.MaxBodyBytes long.
	Body []byte
}

// Host returns the host the Session logs in to, as Config.Login's key
// spells it.
func (s *Session) Host() string { return s.host }

// Get fetches rawURL, which may be relative to the host's root (the scheme
// is that of the host's first URL): a login page, to read a CSRF token from
// it.
func (s *Session) Get(ctx context.Context, rawURL string) (*SessionResponse, error) {
	return s.do(ctx, rawURL, http.MethodGet, "", nil)
}

// PostForm posts form to rawURL as application/x-www-form-urlencoded, as a
// browser submits an HTML form (WHATWG HTML §4.10.21.8).
func (s *Session) PostForm(ctx context.Context, rawURL string, form url.Values) (*SessionResponse, error) {
	return s.do(ctx, rawURL, http.MethodPost, "application/x-www-form-urlencoded", []byte(form.Encode()))
}

// PostJSON posts v, encoded as JSON (RFC 8259), to rawURL.
func (s *Session) PostJSON(ctx context.Context, rawURL string, v any) (*SessionResponse, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: encoding the JSON body for %s: %w", ErrLogin, rawURL, err)
	}
	return s.do(ctx, rawURL, http.MethodPost, "application/json", b)
}

// Cookies returns the cookies the crawl's jar would send to rawURL, for a
// Login function to check that it got the session it asked for.
func (s *Session) Cookies(rawURL string) []*http.Cookie {
	u, err := s.resolve(rawURL)
	if err != nil || s.cr.jar == nil {
		return nil
	}
	return s.cr.jar.Cookies(u)
}

// resolve makes rawURL absolute against the host's root.
func (s *Session) resolve(rawURL string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLogin, err)
	}
	u = s.base.ResolveReference(u)
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("%w: %s is not an http or https URL", ErrLogin, u.Redacted())
	}
	return u, nil
}

// do sends one request through the session fetcher.
func (s *Session) do(ctx context.Context, rawURL, method, contentType string, body []byte) (*SessionResponse, error) {
	u, err := s.resolve(rawURL)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	if hh := s.cr.cfg.HostHeader[urlnorm.Host(u)]; hh != nil {
		h = hh.Clone()
	}
	if contentType != "" {
		h.Set("Content-Type", contentType)
		if strings.HasSuffix(contentType, "json") {
			h.Set("Accept", "application/json, */*;q=0.5")
		}
	}
	resp, err := s.cr.sessionFetcher.Do(ctx, &fetch.Request{URL: u.String(), Method: method, Header: h, Body: body})
	if err != nil {
		return nil, err
	}
	return &SessionResponse{URL: resp.FinalURL.String(), StatusCode: resp.StatusCode, Header: resp.Header, Body: resp.Body}, nil
}
