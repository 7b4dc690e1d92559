package frontierapi

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/service/dashboard"
)

// Limits of one result.
const (
	maxContentHash = 128
	maxErrorText   = 1000
	maxRetryAfter  = 30 * 24 * time.Hour
)

// Why a result was skipped (ResultStatus.Error).
const (
	skipNotInLease     = "not_in_lease"
	skipLeaseExpired   = "lease_expired"
	skipAlreadySettled = "already_settled"
)

// Errors of Settle, matchable with errors.Is.
var (
	// ErrUnknownLease: the lease ID was never issued, or all of its URLs
	// were settled, or it expired.
	ErrUnknownLease = errors.New("frontierapi: unknown lease")
	// ErrWrongWorker: the lease was issued to another worker.
	ErrWrongWorker = errors.New("frontierapi: lease belongs to another worker")
	// ErrInvalidResult: a result is malformed; the error says which and
	// why.
	ErrInvalidResult = errors.New("frontierapi: invalid result")
)

func (s *Server) serveResults(w http.ResponseWriter, r *http.Request) {
	var req ResultsRequest
	if !s.decodeBody(w, r, &req) {
		return
	}
	if req.LeaseID == "" {
		writeError(w, http.StatusBadRequest, CodeMissingParameter, "lease_id is required")
		return
	}
	if len(req.Results) > s.cfg.MaxURLs {
		writeError(w, http.StatusRequestEntityTooLarge, CodeTooManyURLs,
			fmt.Sprintf("%d results in one request; at most %d", len(req.Results), s.cfg.MaxURLs))
		return
	}
	resp, err := s.Settle(req)
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, resp)
	case errors.Is(err, ErrInvalidResult):
		writeError(w, http.StatusBadRequest, CodeInvalidParameter, err.Error())
	case errors.Is(err, ErrUnknownLease):
		writeError(w, http.StatusNotFound, CodeUnknownLease, err.Error())
	case errors.Is(err, ErrWrongWorker):
		writeError(w, http.StatusConflict, CodeWrongWorker, err.Error())
	case errors.Is(err, frontier.ErrClosed):
		writeError(w, http.StatusServiceUnavailable, CodeUnavailable, "the service is shutting down")
	default:
		writeError(w, http.StatusServiceUnavailable, CodeStoreFailed,
			fmt.Sprintf("%v; %d results were applied, send the rest again", err, resp.Processed))
	}
}

// checkResult validates one result and returns its SimHash.
func checkResult(i int, r *Result) (uint64, error) {
	bad := func(format string, args ...any) (uint64, error) {
		return 0, fmt.Errorf("%w: results[%d]: %s", ErrInvalidResult, i, fmt.Sprintf(format, args...))
	}
	if r.URL == "" {
		return bad("url is required")
	}
	if r.Status != ResultSuccess && r.Status != ResultError {
		return bad("status %q: want %q or %q", r.Status, ResultSuccess, ResultError)
	}
	if r.HTTPStatus != 0 && (r.HTTPStatus < 100 || r.HTTPStatus > 599) {
		return bad("http_status %d outside 100..599", r.HTTPStatus)
	}
	if r.RetryAfter < 0 || math.IsNaN(r.RetryAfter) {
		return bad("retry_after %v is negative", r.RetryAfter)
	}
	if len(r.ContentHash) > maxContentHash {
		return bad("content_hash longer than %d bytes", maxContentHash)
	}
	if r.LinksFound < 0 || r.DurationMS < 0 || r.Bytes < 0 {
		return bad("links_found, duration_ms and bytes must not be negative")
	}
	switch r.ErrorKind {
	case "", KindNetwork, KindTimeout, KindHTTP:
	default:
		return bad("error_kind %q: want %q, %q or %q", r.ErrorKind, KindNetwork, KindTimeout, KindHTTP)
	}
	var sim uint64
	if r.SimHash != "" {
		v, err := strconv.ParseUint(r.SimHash, 16, 64)
		if err != nil || len(r.SimHash) > 16 {
			return bad("simhash %q: want up to 16 hex digits", r.SimHash)
		}
		sim = v
	}
	if len(r.Error) > maxErrorText {
		r.Error = r.Error[:maxErrorText]
	}
	return sim, nil
}

// classify turns a result into a frontier outcome and an error category
// ("" for a success).
func classify(r *Result, sim uint64) (frontier.Outcome, string) {
	if r.Status == ResultSuccess {
		if r.HTTPStatus == http.StatusNotModified {
			return frontier.NotModified(), ""
		}
		fp := sim
		if fp == 0 && r.ContentHash != "" {
			h := fnv.New64a()
			h.Write([]byte(r.ContentHash))
			fp = h.Sum64()
		}
		return frontier.Success(fp), ""
	}
	var category string
	switch {
	case r.HTTPStatus >= 500:
		category = "http_5xx"
	case r.HTTPStatus >= 400:
		category = "http_4xx"
	case r.ErrorKind == KindTimeout:
		category = "timeout"
	default:
		category = "network"
	}
	after := time.Duration(min(r.RetryAfter, maxRetryAfter.Seconds()) * float64(time.Second))
	switch {
	case category == "network", category == "timeout", category == "http_5xx",
		r.HTTPStatus == http.StatusRequestTimeout, r.HTTPStatus == http.StatusTooEarly,
		r.HTTPStatus == http.StatusTooManyRequests:
		// Transient: the server or the path to it may recover (RFC 9110
		// §15.5.9, §15.6; RFC 6585 §4 for 429).
		return frontier.Retry(after), category
	default:
		return frontier.Failed(), category
	}
}

// Settle is POST /api/v1/frontier/results without HTTP: it settles the
// results' URLs of lease req.LeaseID. Results for URLs that are not (or no
// longer) in the lease are skipped and say why. A store error stops it; the
// response then counts what was applied.
//
// A 429 or 503 result with a RetryAfter blocks its host for that long (at
// most 30 days), before the result is settled and even if it is not, but
// only for a URL that was handed out under req.LeaseID, and the host blocked
// is the one the URL was leased for. That holds while the lease is live,
// after some of its URLs were settled or expired, and, since a throttled
// fetch may outlast its lease, for a while after the lease ID became
// unknown: for the lease duration (Frontier.LeaseTTL, default 5 minutes)
// after the lease expired, or after its last URL was settled if that came
// first. Settle then still returns ErrUnknownLease. Past that window, after
// a restart, for a lease ID that was never issued, a req.WorkerID other
// than the lease's, or a URL that was not in the lease, a RetryAfter blocks
// nothing. The service remembers at most 10,000 such ended lease IDs with
// 100,000 URLs in all, forgetting the oldest first.
func (s *Server) Settle(req ResultsRequest) (ResultsResponse, error) {
	resp := ResultsResponse{Results: make([]ResultStatus, len(req.Results))}
	sims := make([]uint64, len(req.Results))
	for i := range req.Results {
		sim, err := checkResult(i, &req.Results[i])
		if err != nil {
			return ResultsResponse{}, err
		}
		sims[i] = sim
	}
	now := s.cfg.Now()
	s.pruneExpired(now)
	s.mu.Lock()
	b := s.batches[req.LeaseID]
	if b == nil {
		// The fetch may have outlasted its lease because the host
		// throttled it: its Retry-After holds all the same, if the
		// lease really was issued, a short while ago, with this URL.
		var hosts []string
		if e := s.recent.getLocked(req.LeaseID, now); e != nil && (req.WorkerID == "" || req.WorkerID == e.worker) {
			hosts = s.hostsOf(e.hosts, req.Results)
		}
		s.mu.Unlock()
		s.throttle(req.Results, hosts, now)
		return ResultsResponse{}, fmt.Errorf("%w %q (never issued, already settled, or expired)", ErrUnknownLease, req.LeaseID)
	}
	if req.WorkerID != "" && req.WorkerID != b.worker {
		s.mu.Unlock()
		return ResultsResponse{}, fmt.Errorf("%w: %q, not %q", ErrWrongWorker, b.worker, req.WorkerID)
	}
	worker := b.worker
	leases := make([]*frontier.Lease, len(req.Results))
	// skips says why a result with no lease is skipped: its URL was
	// handed out under the ID and settled or expired since, or not.
	skips := make([]string, len(req.Results))
	for i, r := range req.Results {
		leases[i] = b.items[r.URL]
		if leases[i] == nil {
			skips[i] = skipNotInLease
			if why, ok := b.ended[s.recent.urlKey(r.URL)]; ok {
				skips[i] = why
			}
		}
	}
	hosts := s.hostsOf(b.hosts, req.Results)
	s.mu.Unlock()
	s.stats.seen(worker, now)
	// Block throttled hosts before any settlement makes them ready again,
	// and whether or not the settlement is applied.
	s.throttle(req.Results, hosts, now)

	var firstErr error
	for i := range req.Results {
		r := &req.Results[i]
		st := &resp.Results[i]
		st.URL = r.URL
		l := leases[i]
		if l == nil {
			st.Outcome, st.Error = OutcomeSkipped, skips[i]
			continue
		}
		o, category := classify(r, sims[i])
		set, err := s.f.DoneAt(now, l, o)
		switch {
		case err == nil:
		case errors.Is(err, frontier.ErrLeaseExpired):
			st.Outcome, st.Error = OutcomeSkipped, skipLeaseExpired
			s.forget(req.LeaseID, l, false, now)
			continue
		case errors.Is(err, frontier.ErrLeaseSettled):
			st.Outcome, st.Error = OutcomeSkipped, skipAlreadySettled
			continue
		default:
			firstErr = err
		}
		if firstErr != nil {
			for j := i; j < len(req.Results); j++ {
				resp.Results[j] = ResultStatus{URL: req.Results[j].URL, Outcome: OutcomeSkipped, Error: "not_applied"}
			}
			break
		}
		resp.Processed++
		st.Outcome = s.record(worker, l, r, set, category, sims[i], now)
		st.DueAt = set.At
		if st.Outcome == OutcomeRetry {
			resp.RetriesScheduled++
		}
		s.forget(req.LeaseID, l, true, now)
	}
	if resp.Processed > 0 {
		s.notify()
	}
	return resp, firstErr
}

// hostsOf returns the host each result's URL was leased for, from a
// batch's hosts, or "" for a URL that was not in the batch.
func (s *Server) hostsOf(hosts map[uint64]string, rs []Result) []string {
	out := make([]string, len(rs))
	for i := range rs {
		out[i] = hosts[s.recent.urlKey(rs[i].URL)]
	}
	return out
}

// throttle blocks the host of every result that is a 429 or 503 with
// Retry-After until that time has passed: the answer is about the host, so
// it holds whatever becomes of the lease (settled, expired, unknown).
// hosts[i] is the host rs[i]'s URL was leased for; a result without one
// (not in the lease, or no hosts at all) blocks nothing, so that a caller
// cannot block a host it was not given.
func (s *Server) throttle(rs []Result, hosts []string, now time.Time) {
	for i := range rs {
		r := &rs[i]
		if r.RetryAfter <= 0 || (r.HTTPStatus != http.StatusTooManyRequests && r.HTTPStatus != http.StatusServiceUnavailable) {
			continue
		}
		if i >= len(hosts) || hosts[i] == "" {
			continue
		}
		host := hosts[i]
		until := now.Add(time.Duration(min(r.RetryAfter, maxRetryAfter.Seconds()) * float64(time.Second)))
		s.f.BlockHost(host, until)
		s.stats.block(host, fmt.Sprintf("HTTP %d Retry-After", r.HTTPStatus), until)
	}
}

// forget removes a settled (or expired) lease from its batch and the
// service's bookkeeping; a batch left empty is remembered in s.recent.
func (s *Server) forget(id string, l *frontier.Lease, settled bool, now time.Time) {
	s.mu.Lock()
	b := s.batches[id]
	present := b != nil && b.items[l.URL] == l
	if present {
		delete(b.items, l.URL)
		if k := s.recent.urlKey(l.URL); b.hosts[k] != "" {
			if b.ended == nil {
				b.ended = map[uint64]string{}
			}
			b.ended[k] = skipLeaseExpired
			if settled {
				b.ended[k] = skipAlreadySettled
			}
		}
		if len(b.items) == 0 {
			delete(s.batches, id)
			end := b.expires
			if now.Before(end) {
				end = now
			}
			s.recent.addLocked(b, end.Add(b.ttl), now)
		}
	}
	s.mu.Unlock()
	if !present {
		return
	}
	c := s.stats
	c.mu.Lock()
	c.releaseLocked(b.worker, l.Host)
	if !settled {
		c.queueLocked(s.band(l), 1) // expired: the frontier queued it again
	}
	c.mu.Unlock()
}

// record keeps the counters and history of one settled result and returns
// the settlement's name.
func (s *Server) record(worker string, l *frontier.Lease, r *Result, set frontier.Settlement, category string, sim uint64, now time.Time) string {
	outcome := OutcomeDone
	switch set.Kind {
	case frontier.SettlementFailed, frontier.SettlementGivenUp:
		outcome = OutcomeFailed
	case frontier.SettlementRetrying:
		outcome = OutcomeRetry
	}
	c := s.stats
	c.mu.Lock()
	if w, ok := c.workers[worker]; ok {
		w.results++
	}
	if r.HTTPStatus > 0 {
		c.urls.Fetched++
		c.rate.add(now, c.started, 1)
	}
	c.bytes += r.Bytes
	switch outcome {
	case OutcomeDone:
		c.urls.Successful++
		if r.Duplicate {
			c.urls.Duplicates++
		}
	case OutcomeRetry:
		c.urls.Retried++
		c.queueLocked(s.band(l), 1)
	case OutcomeFailed:
		c.urls.Failed++
	}
	countCategory(&c.errs, category)
	c.mu.Unlock()

	if s.cfg.Traps != nil && sim != 0 && r.Status == ResultSuccess {
		s.cfg.Traps.Observe(l.URL, sim)
	}
	s.hist.Fetched(dashboard.FetchRecord{
		URL: l.URL, Host: l.Host, Time: now, Status: r.HTTPStatus, DurationMS: r.DurationMS,
		ContentHash: r.ContentHash, Error: r.Error, Category: category, Outcome: outcome,
	})
	if r.Status == ResultSuccess {
		s.hist.SetOutLinks(l.URL, r.LinksFound)
	}
	return outcome
}
