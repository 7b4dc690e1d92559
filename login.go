package crawlkit

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// Logging in: Config.Login signs the crawl in to a host once, before the
// host's first page request, through a Session whose cookies the page
// requests then carry. Plain crawling stays GET-only: a form found on a
// page is never submitted.

// LoginFunc signs the crawl in to one host (Config.Login): it posts a form
// or JSON through s, and returns nil once the session is established. An
// error leaves the host's URLs unfetched (ReasonLoginFailed) for the rest
// of the Run.
type LoginFunc func(ctx context.Context, s *Session) error

// logins runs each host's LoginFunc once per Run; hosts logged in by an
// earlier Run on the DataDir start done.
type logins struct {
	mu    sync.Mutex
	hosts map[string]*loginRun
}

// loginRun is one host's login: done is closed when it ended; err is its
// failure; abandoned reports that the crawl ended while it ran, so that it
// is neither a failure nor a success.
type loginRun struct {
	done      chan struct{}
	err       error
	abandoned bool
}

// start returns host's login, and whether the caller is to run it.
func (ls *logins) start(host string) (*loginRun, bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.hosts == nil {
		ls.hosts = map[string]*loginRun{}
	}
	if r := ls.hosts[host]; r != nil {
		return r, false
	}
	r := &loginRun{done: make(chan struct{})}
	ls.hosts[host] = r
	return r, true
}

// running counts the logins under way (Stats.Waiting.LoginHosts).
func (ls *logins) running() int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	n := 0
	for _, r := range ls.hosts {
		select {
		case <-r.done:
		default:
			n++
		}
	}
	return n
}

// restore marks host as logged in by an earlier Run.
func (ls *logins) restore(host string) {
	r, _ := ls.start(host)
	close(r.done)
}

// finish ends r, host's login; an abandoned one is forgotten, so that
// the next lease of the host runs it again.
func (ls *logins) finish(host string, r *loginRun) {
	if r.abandoned {
		ls.mu.Lock()
		delete(ls.hosts, host)
		ls.mu.Unlock()
	}
	close(r.done)
}

// loginGate runs l's host's login if it has one and it has not run yet,
// or waits for the worker running it. It reports false, with res.gate set
// to ReasonLoginFailed, when the login failed, and false with res.gate
// unset when ctx ended first (the lease is abandoned).
func (cr *Crawler) loginGate(ctx context.Context, l *frontier.Lease, res *result) bool {
	host := cr.leaseHost(l)
	fn := cr.cfg.Login[host]
	if fn == nil {
		return true
	}
	r, leader := cr.logins.start(host)
	if leader {
		r.err = cr.runLogin(ctx, l, fn)
		r.abandoned = ctx.Err() != nil
		cr.logins.finish(host, r)
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		return false
	}
	switch {
	case r.abandoned:
		return false
	case r.err != nil:
		res.gate = ReasonLoginFailed
		return false
	}
	return true
}

// runLogin calls fn for l's host, saves the cookies it got and says how it
// went at Info, once.
func (cr *Crawler) runLogin(ctx context.Context, l *frontier.Lease, fn LoginFunc) error {
	u, err := url.Parse(l.URL)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrLogin, err)
	}
	host := cr.leaseHost(l)
	s := &Session{cr: cr, host: host, base: &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/"}}
	err = callRecovered("login", func() error { return fn(ctx, s) })
	if ctx.Err() != nil {
		return err
	}
	if err != nil {
		cr.cfg.Logger.Info("login failed; the host's URLs are not fetched in this Run", "host", host, "reason", ReasonLoginFailed.String(), "err", err)
		if !errors.Is(err, ErrLogin) {
			err = fmt.Errorf("%w: %s: %w", ErrLogin, host, err)
		}
		return err
	}
	cr.jar.loggedIn(host)
	if err := cr.jar.save(); err != nil {
		cr.cfg.Logger.Warn("saving the cookies", "err", err)
	}
	cr.cfg.Logger.Info("logged in", "host", host)
	return nil
}

// openSession makes the fetcher of Session requests from the page
// fetcher's config base: the page fetcher's connections, its politeness
// model and the cookie jar; no robots.txt or scope check, no retries.
func (cr *Crawler) openSession(base fetch.Config) error {
	if len(cr.cfg.Login) == 0 {
		return nil
	}
	sc := base
	sc.ShareConns = cr.fetcher
	sc.Check = func(ctx context.Context, _ *url.URL) error { return cr.waitRate(ctx) }
	sc.MaxRetries = -1
	f, err := fetch.New(sc)
	if err != nil {
		return fmt.Errorf("crawlkit: session fetcher: %w", err)
	}
	cr.sessionFetcher = f
	for _, h := range cr.jar.loggedInHosts() {
		if cr.cfg.Login[h] != nil {
			cr.logins.restore(h)
		}
	}
	return nil
}

// checkLoginHosts refuses Login keys that are not hosts as urlnorm.Host
// spells them (the form leases carry), and nil functions.
func checkLoginHosts(m map[string]LoginFunc) error {
	for host, fn := range m {
		if fn == nil {
			return fmt.Errorf("%w: Login[%q] is nil", ErrConfig, host)
		}
		u, err := url.Parse("http://" + host + "/")
		bad := err != nil || u.Host != host || urlnorm.Host(u) != host
		if !bad {
			// A default port is dropped under either scheme.
			bad = urlnorm.Host(&url.URL{Scheme: "https", Host: host}) != host
		}
		if bad {
			want := ""
			if err == nil {
				want = fmt.Sprintf(" (write %q)", urlnorm.Host(u))
			}
			return fmt.Errorf("%w: Login key %q is not a host as urlnorm.Host spells it%s", ErrConfig, host, want)
		}
	}
	return nil
}
