package crawlkit

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
)

// Stage 6 of the path of a URL: settle. What the earlier stages learned
// about a lease is a result; classify turns it into the frontier outcome
// and the reason, and settle hands the outcome to the Queue and counts what
// the Queue did, in one place.

// result is what the gate, fetch, analyze and handle stages learned about
// one lease.
type result struct {
	// gate is set when the gate ended the lease without a fetch;
	// robotsRetryAt is when an unreachable robots.txt is fetched again.
	gate          Reason
	robotsRetryAt time.Time

	// redirectFetched: the URL was fetched already as another URL's
	// redirect target in this Run.
	redirectFetched bool

	// err is the fetch's error; status the HTTP status of the answer
	// (0 when none came), with its Retry-After if it had a valid one.
	err           error
	status        int
	retryAfter    time.Duration
	hasRetryAfter bool

	// handlerErr is the Handler's error (a panic included); linksErr the
	// Queue's refusal of the page's links.
	handlerErr  error
	linksErr    error
	fingerprint uint64
}

// settleClass is what a decision counts as.
type settleClass uint8

const (
	classSuccess     settleClass = iota // fetched, 2xx or 304
	classRedirected                     // settled as fetched by another URL's redirect
	classFailed                         // fetched or tried, and given up (4xx, permanent error)
	classNotFetched                     // ended without a request by a rule (robots, guard, …)
	classRetry                          // put back to be tried again
	classNotModified                    // 304
)

// decision is classify's answer.
type decision struct {
	outcome frontier.Outcome
	class   settleClass
	reason  Reason
}

// settlePolicy holds the Config fields classify reads.
type settlePolicy struct {
	robotsRetries int
	maxRetryWait  time.Duration
}

// classify decides a lease's outcome from its result. It is a pure
// function of the result, the lease's attempt count, the policy and now.
func classify(r *result, attempt int, p settlePolicy, now time.Time) decision {
	fail := func(c settleClass, why Reason) decision {
		return decision{outcome: frontier.Failed(), class: c, reason: why}
	}
	// deferTo puts the URL back until at, unless that is further away
	// than MaxRetryWait.
	deferTo := func(at time.Time, why Reason) decision {
		wait := max(0, at.Sub(now))
		if wait > p.maxRetryWait {
			return fail(classNotFetched, ReasonMaxWait)
		}
		return decision{outcome: frontier.Retry(wait), class: classRetry, reason: why}
	}
	robotsUnreachable := func(at time.Time) decision {
		if attempt >= p.robotsRetries {
			return fail(classNotFetched, ReasonRobotsUnreachable)
		}
		return deferTo(at, ReasonRobotsUnreachable)
	}

	switch {
	case r.redirectFetched:
		return decision{outcome: frontier.Success(0), class: classRedirected}
	case r.gate == ReasonRobotsUnreachable:
		return robotsUnreachable(r.robotsRetryAt)
	case r.gate != reasonNone:
		return fail(classNotFetched, r.gate)
	case r.err != nil:
		return classifyError(r.err, deferTo, fail)
	case r.status >= 200 && r.status < 300:
		switch {
		case r.handlerErr != nil:
			return decision{outcome: frontier.Retry(0), class: classRetry, reason: ReasonHandlerError}
		case r.linksErr != nil:
			return decision{outcome: frontier.Retry(0), class: classRetry, reason: ReasonLinksPending}
		}
		o := frontier.Success(0)
		o.Fingerprint = r.fingerprint
		return decision{outcome: o, class: classSuccess}
	case r.status == http.StatusTooManyRequests || r.status >= 500:
		if r.hasRetryAfter {
			if r.retryAfter > p.maxRetryWait {
				return fail(classNotFetched, ReasonMaxWait)
			}
			return decision{outcome: frontier.Retry(r.retryAfter), class: classRetry, reason: ReasonRetryAfter}
		}
		return decision{outcome: frontier.Retry(0), class: classRetry, reason: ReasonHTTPError}
	default:
		// 4xx and the rest: the server's final answer. A Handler error
		// still asks for the page again.
		if r.handlerErr != nil {
			return decision{outcome: frontier.Retry(0), class: classRetry, reason: ReasonHandlerError}
		}
		return fail(classFailed, reasonNone)
	}
}

// classifyError decides the outcome of a fetch that returned err.
func classifyError(err error,
	deferTo func(time.Time, Reason) decision, fail func(settleClass, Reason) decision) decision {
	var hb *fetch.HostBlockedError
	switch {
	case errors.Is(err, fetch.ErrNotModified):
		return decision{outcome: frontier.NotModified(), class: classNotModified}
	case errors.Is(err, fetch.ErrBlockedAddress):
		return fail(classNotFetched, ReasonGuard)
	case errors.As(err, &hb):
		return deferTo(hb.Until, ReasonRetryAfter)
	case errors.Is(err, fetch.ErrTimeout), isTransient(err):
		return decision{outcome: frontier.Retry(0), class: classRetry, reason: ReasonFetchError}
	default:
		return fail(classFailed, ReasonFetchError)
	}
}

// isTransient reports network errors worth another attempt later.
func isTransient(err error) bool {
	if errors.Is(err, fetch.ErrBlockedAddress) || refusedAnswer(err) {
		return false
	}
	var ue *url.Error
	return errors.As(err, &ue) || strings.Contains(err.Error(), "connection")
}

// settle hands l's outcome to the Queue and counts what the Queue did with
// it. It is the one place where a lease's end is counted.
func (cr *Crawler) settle(l *frontier.Lease, r *result) {
	now := cr.cfg.Now()
	d := classify(r, l.Attempt, cr.policy, now)
	if d.class == classRetry && d.reason == ReasonRobotsUnreachable && r.gate == ReasonRobotsUnreachable {
		// The whole host waits for its robots.txt, not only this URL; a
		// host in a politeness group (Config.PolitenessKey) cannot be
		// blocked without its group, so there only the URL waits.
		if cr.cfg.PolitenessKey == nil {
			cr.front.BlockHost(l.Host, r.robotsRetryAt)
		}
		cr.waits.set(cr.leaseHost(l), waitRobots, r.robotsRetryAt)
	}
	st, err := cr.front.Done(l, d.outcome)
	if err != nil {
		if !errors.Is(err, frontier.ErrClosed) {
			cr.cfg.Logger.Warn("settling lease", "url", l.URL, "err", err)
		}
		return
	}
	cr.count(l, r, d, st.Kind == frontier.SettlementGivenUp)
}

// count records a settled lease in the stats and the Debug log. givenUp
// reports that the Queue gave a retried URL up (its MaxAttempts).
func (cr *Crawler) count(l *frontier.Lease, r *result, d decision, givenUp bool) {
	s := cr.stats
	if r.status > 0 && r.err == nil && !r.redirectFetched {
		cr.stats.hostFetched(cr.leaseHost(l), d.class != classSuccess, cr.cfg.Now())
	}
	switch {
	case r.status >= 500:
		s.err5xx.Add(1)
	case r.status >= 400:
		s.err4xx.Add(1)
	case d.reason == ReasonFetchError && errors.Is(r.err, fetch.ErrTimeout):
		s.errTimeout.Add(1)
	case d.reason == ReasonFetchError:
		s.errNetwork.Add(1)
	}
	if d.reason == ReasonFetchError && r.err != nil {
		cr.lastFetchErr.Store(r.err.Error())
	}
	switch d.class {
	case classSuccess, classNotModified:
		s.successful.Add(1)
	case classRedirected:
		s.redirectFetched.Add(1)
	case classFailed:
		s.failed.Add(1)
		cr.logDrop(l.URL, d.reason, "failed", r)
	case classNotFetched:
		s.notFetched.add(d.reason)
		cr.logDrop(l.URL, d.reason, "not fetched", r)
	case classRetry:
		if givenUp {
			s.failed.Add(1)
			s.notFetched.add(ReasonRetryBudget)
			cr.logDrop(l.URL, ReasonRetryBudget, "given up after "+d.reason.String(), r)
			return
		}
		s.retried.Add(1)
		s.deferred.add(d.reason)
		cr.logDrop(l.URL, d.reason, "put back", r)
	}
}

// logDrop logs a URL that was not fetched, failed or was put back, at
// Debug.
func (cr *Crawler) logDrop(u string, why Reason, what string, r *result) {
	if !cr.debug {
		return
	}
	args := []any{"url", u, "reason", why.String()}
	if r.err != nil {
		args = append(args, "err", r.err)
	}
	if r.status != 0 {
		args = append(args, "status", r.status)
	}
	if r.handlerErr != nil {
		args = append(args, "err", r.handlerErr)
	}
	cr.cfg.Logger.Debug(what, args...)
}
