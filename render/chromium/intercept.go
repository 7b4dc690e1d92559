package chromium

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdpfetch "github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/render"
)

// maxNavigations bounds render.Result.Navigations.
const maxNavigations = 64

// renderState is the interception state of one render: every request the
// page makes while it is current in its tab is decided here.
type renderState struct {
	ctx     context.Context // ends with the render; bounds the Fetcher's calls
	c       *Browser
	req     *render.Request
	fetcher render.Fetcher
	wg      sync.WaitGroup // fetches in progress

	mu           sync.Mutex
	docServed    bool
	docFrame     cdp.FrameID
	docErr       error
	redirectTo   string          // the document's final URL after redirects
	redirectResp *fetch.Response // what to answer there
	requests     int
	skipped      int
	bytes        int64
	blocked      []render.Blocked
	blockedTotal int
	navigations  []string
	truncated    bool
	inflight     int
	last         time.Time     // the last time a request started or ended
	wake         chan struct{} // signalled on every change of inflight
}

func newRenderState(ctx context.Context, c *Browser, req *render.Request) *renderState {
	f := req.Fetcher
	if f == nil {
		f = c.fetcher
	}
	return &renderState{ctx: ctx, c: c, req: req, fetcher: f, last: time.Now(), wake: make(chan struct{}, 1)}
}

// handle decides one paused request.
func (st *renderState) handle(t *tab, ev *cdpfetch.EventRequestPaused) {
	rawURL, method := ev.Request.URL, ev.Request.Method
	isDoc := ev.ResourceType == network.ResourceTypeDocument

	st.mu.Lock()
	if isDoc && !st.docServed {
		// The first document request of the render is the page itself.
		st.docServed, st.docFrame = true, ev.FrameID
		st.mu.Unlock()
		st.serveDocument(t, ev)
		return
	}
	if isDoc && ev.FrameID == st.docFrame {
		if st.redirectTo != "" && rawURL == st.redirectTo && st.redirectResp != nil {
			resp := st.redirectResp
			st.redirectResp = nil
			st.mu.Unlock()
			t.fulfill(ev.RequestID, resp.StatusCode, resp.Header, resp.Body)
			return
		}
		if method == http.MethodGet && len(st.navigations) < maxNavigations {
			st.navigations = append(st.navigations, rawURL)
		}
		st.blockLocked(rawURL, method, ev.ResourceType, render.ReasonNavigation, nil)
		st.mu.Unlock()
		// A 204 answer to a navigation leaves the current document in
		// place (a failed one would replace it with an error page).
		t.fulfill(ev.RequestID, http.StatusNoContent, nil, nil)
		return
	}
	if st.c.skip[ev.ResourceType] || isFavicon(ev) {
		st.skipped++
		st.mu.Unlock()
		t.fail(ev.RequestID, network.ErrorReasonBlockedByClient)
		return
	}
	reason, err := st.precheck(rawURL, method)
	if reason == "" && st.requests >= st.c.cfg.MaxRequests {
		reason = render.ReasonRequestCap
		st.truncated = true
	}
	if reason != "" {
		st.blockLocked(rawURL, method, ev.ResourceType, reason, err)
		st.mu.Unlock()
		t.fail(ev.RequestID, network.ErrorReasonBlockedByClient)
		return
	}
	st.requests++
	st.inflight++
	st.last = time.Now()
	st.wg.Add(1)
	st.mu.Unlock()
	go func() {
		defer st.wg.Done()
		defer st.finished()
		st.fetchFor(t, ev, rawURL, method)
	}()
}

// precheck refuses what needs no fetch to refuse: other schemes and
// methods, and IP-address hosts the guard does not allow (so they are
// refused before anything dials, whatever dial function the Fetcher uses).
func (st *renderState) precheck(rawURL, method string) (render.Reason, error) {
	if method != http.MethodGet && method != http.MethodHead {
		return render.ReasonMethod, nil
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return render.ReasonScheme, nil
	}
	if addr, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil {
		if err := st.c.guard.Check(u.Hostname(), addr.Unmap().WithZone("")); err != nil {
			return render.ReasonAddress, err
		}
	}
	return "", nil
}

// serveDocument answers the page's own request: from render.Request.Body when the
// caller fetched it already, else through the Fetcher.
func (st *renderState) serveDocument(t *tab, ev *cdpfetch.EventRequestPaused) {
	req := st.req
	if req.Body != nil {
		status := req.StatusCode
		if status == 0 {
			status = http.StatusOK
		}
		body := req.Body
		st.mu.Lock()
		if int64(len(body)) > st.c.cfg.MaxPageBytes {
			body = body[:st.c.cfg.MaxPageBytes]
			st.truncated = true
		}
		st.bytes += int64(len(body))
		st.mu.Unlock()
		hdr := req.Header
		if hdr == nil || hdr.Get("Content-Type") == "" {
			hdr = hdr.Clone()
			if hdr == nil {
				hdr = http.Header{}
			}
			hdr.Set("Content-Type", "text/html")
		}
		t.fulfill(ev.RequestID, status, hdr, body)
		return
	}
	st.mu.Lock()
	st.inflight++
	st.wg.Add(1)
	st.mu.Unlock()
	go func() {
		defer st.wg.Done()
		defer st.finished()
		resp, err := st.fetcher.Do(st.ctx, &fetch.Request{URL: ev.Request.URL})
		if err != nil {
			st.mu.Lock()
			st.docErr = err
			st.mu.Unlock()
			t.fail(ev.RequestID, network.ErrorReasonFailed)
			return
		}
		st.mu.Lock()
		if int64(len(resp.Body)) > st.c.cfg.MaxPageBytes {
			// The page counts against the weight cap as it does when
			// the caller hands its body in (render.Request.Body).
			r := *resp
			r.Body = r.Body[:st.c.cfg.MaxPageBytes]
			resp = &r
			st.truncated = true
		}
		st.bytes += int64(len(resp.Body))
		if resp.FinalURL != nil && resp.FinalURL.String() != ev.Request.URL {
			// Let the browser follow the redirect, so that the page's
			// URL (and what its relative links resolve against) is the
			// final one; its request is answered with this response.
			st.redirectTo, st.redirectResp = resp.FinalURL.String(), resp
			st.mu.Unlock()
			t.fulfill(ev.RequestID, http.StatusFound, http.Header{"Location": {resp.FinalURL.String()}}, nil)
			return
		}
		st.mu.Unlock()
		t.fulfill(ev.RequestID, resp.StatusCode, resp.Header, resp.Body)
	}()
}

// fetchFor fetches a subresource through the Fetcher and answers the
// browser with it.
func (st *renderState) fetchFor(t *tab, ev *cdpfetch.EventRequestPaused, rawURL, method string) {
	hdr := http.Header{}
	for _, name := range []string{"Accept", "Accept-Language", "Referer"} {
		for k, v := range ev.Request.Headers {
			if s, ok := v.(string); ok && strings.EqualFold(k, name) && s != "" {
				hdr.Set(name, s)
			}
		}
	}
	resp, err := st.fetcher.Do(st.ctx, &fetch.Request{URL: rawURL, Method: method, Header: hdr})
	if err != nil {
		reason := classify(err)
		st.block(rawURL, method, ev.ResourceType, reason, err)
		cdpReason := network.ErrorReasonFailed
		if reason != render.ReasonFailed {
			cdpReason = network.ErrorReasonBlockedByClient
		}
		t.fail(ev.RequestID, cdpReason)
		return
	}
	st.mu.Lock()
	if st.bytes+int64(len(resp.Body)) > st.c.cfg.MaxPageBytes {
		st.truncated = true
		st.blockLocked(rawURL, method, ev.ResourceType, render.ReasonWeightCap,
			fmt.Errorf("render: %d bytes would exceed the page weight cap of %d", st.bytes+int64(len(resp.Body)), st.c.cfg.MaxPageBytes))
		st.mu.Unlock()
		t.fail(ev.RequestID, network.ErrorReasonBlockedByClient)
		return
	}
	st.bytes += int64(len(resp.Body))
	st.mu.Unlock()
	t.fulfill(ev.RequestID, resp.StatusCode, resp.Header, resp.Body)
}

// classify maps a render.Fetcher error to the reason reported for it.
func classify(err error) render.Reason {
	var hb *fetch.HostBlockedError
	switch {
	case errors.Is(err, fetch.ErrBlockedAddress):
		return render.ReasonAddress
	case errors.Is(err, fetch.ErrDisallowed):
		return render.ReasonDisallowed
	case errors.Is(err, fetch.ErrHostBlocked), errors.As(err, &hb):
		return render.ReasonPoliteness
	}
	return render.ReasonFailed
}

// finished records the end of a fetch.
func (st *renderState) finished() {
	st.mu.Lock()
	st.inflight--
	st.last = time.Now()
	st.mu.Unlock()
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

func (st *renderState) block(rawURL, method string, typ network.ResourceType, reason render.Reason, err error) {
	st.mu.Lock()
	st.blockLocked(rawURL, method, typ, reason, err)
	st.mu.Unlock()
}

// blockLocked records a refused request; st.mu must be held.
func (st *renderState) blockLocked(rawURL, method string, typ network.ResourceType, reason render.Reason, err error) {
	st.blockedTotal++
	if len(st.blocked) < render.MaxBlocked {
		if len(rawURL) > 2048 {
			rawURL = rawURL[:2048]
		}
		st.blocked = append(st.blocked, render.Blocked{URL: rawURL, Method: method, Type: string(typ), Reason: reason, Err: err})
	}
}

// settle waits until no request has been in flight for d, or ctx ends; it
// reports whether the network settled.
func (st *renderState) settle(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		st.mu.Lock()
		inflight, idle := st.inflight, time.Since(st.last)
		st.mu.Unlock()
		if inflight == 0 && idle >= d {
			return true
		}
		wait := d - idle
		if inflight > 0 || wait <= 0 {
			wait = d
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return false
		case <-st.wake:
		case <-timer.C:
		}
	}
}

// activeSince reports whether a request started or ended after t, or is
// in flight.
func (st *renderState) activeSince(t time.Time) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.inflight > 0 || st.last.After(t)
}

func (st *renderState) documentError() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.docErr
}

func (st *renderState) served() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.docServed
}

// result copies the accounting into a render.Result.
func (st *renderState) result() *render.Result {
	st.mu.Lock()
	defer st.mu.Unlock()
	return &render.Result{
		Requests:     st.requests,
		Skipped:      st.skipped,
		Bytes:        st.bytes,
		Blocked:      append([]render.Blocked(nil), st.blocked...),
		BlockedTotal: st.blockedTotal,
		Navigations:  append([]string(nil), st.navigations...),
		Truncated:    st.truncated,
	}
}

// isFavicon reports the browser's own request for the page's icon, which
// costs a request and adds nothing to the DOM.
func isFavicon(ev *cdpfetch.EventRequestPaused) bool {
	return ev.ResourceType == network.ResourceTypeOther && strings.HasSuffix(ev.Request.URL, "/favicon.ico")
}
