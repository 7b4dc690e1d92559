package frontierapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/trap"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// meta is what the service keeps with a queued URL (frontier.Entry.Meta).
type meta struct {
	Source     string `json:"s,omitempty"`
	Crawl      string `json:"c,omitempty"`
	Discovered int64  `json:"t,omitempty"` // Unix milliseconds
}

// Field limits of a submission.
const (
	maxCrawlID = 256
	maxDepth   = 1 << 16
	// maxEntryBytes is the frontier's bound on a URL and on its
	// metadata, which a normalization profile with a larger MaxLength
	// could exceed.
	maxEntryBytes = 64 << 10
)

// candidate is one submitted URL on its way into the frontier.
type candidate struct {
	idx    int
	norm   string
	host   string
	key    uint64
	source string
	depth  int
	entry  frontier.Entry
}

func (s *Server) serveSubmit(w http.ResponseWriter, r *http.Request) {
	var req SubmitRequest
	if !s.decodeBody(w, r, &req) {
		return
	}
	if len(req.URLs) > s.cfg.MaxURLs {
		writeError(w, http.StatusRequestEntityTooLarge, CodeTooManyURLs,
			fmt.Sprintf("%d URLs in one request; at most %d", len(req.URLs), s.cfg.MaxURLs))
		return
	}
	if len(req.CrawlID) > maxCrawlID {
		writeError(w, http.StatusBadRequest, CodeInvalidParameter, fmt.Sprintf("crawl_id longer than %d bytes", maxCrawlID))
		return
	}
	resp, err := s.Submit(req)
	if err != nil {
		if errors.Is(err, frontier.ErrClosed) {
			writeError(w, http.StatusServiceUnavailable, CodeUnavailable, "the service is shutting down")
			return
		}
		writeError(w, http.StatusServiceUnavailable, CodeStoreFailed, "no URL was accepted: "+err.Error())
		return
	}
	writeJSON(w, http.StatusAccepted, resp)
}

// Submit is POST /api/v1/frontier/urls without HTTP: it normalizes,
// deduplicates and trap-checks req's URLs and queues the new ones. When it
// returns nil every accepted URL is in the frontier's Store. On an error no
// URL was accepted (but some may have been queued: submitting them again may
// queue them twice, never lose them).
func (s *Server) Submit(req SubmitRequest) (SubmitResponse, error) {
	now := s.cfg.Now()
	resp := SubmitResponse{Results: make([]SubmitResult, len(req.URLs))}
	cands := make([]candidate, 0, len(req.URLs))
	inBatch := make(map[uint64]int, len(req.URLs))
	for i, u := range req.URLs {
		res := &resp.Results[i]
		norm, err := s.norm.Normalize(u.URL)
		if err != nil {
			res.Status, res.Reason = StatusRejected, rejectReason(err)
			continue
		}
		res.Normalized = norm
		if u.Depth < 0 || u.Depth > maxDepth {
			res.Status, res.Reason = StatusRejected, fmt.Sprintf("invalid_depth: %d is outside 0..%d", u.Depth, maxDepth)
			continue
		}
		// The frontier refuses a whole batch for one bad entry, which
		// would fail the request as a store error: refuse the entry.
		if u.Priority < 0 || math.IsNaN(u.Priority) || math.IsInf(u.Priority, 0) {
			res.Status, res.Reason = StatusRejected, fmt.Sprintf("invalid_priority: %v is not a finite non-negative number", u.Priority)
			continue
		}
		if len(norm) > maxEntryBytes {
			res.Status, res.Reason = StatusRejected, fmt.Sprintf("%s: %d bytes once normalized; at most %d", reasonTooLong, len(norm), maxEntryBytes)
			continue
		}
		host, err := urlnorm.HostOf(norm)
		if err != nil {
			res.Status, res.Reason = StatusRejected, rejectReason(err)
			continue
		}
		key := urlnorm.Key(norm)
		if _, dup := inBatch[key]; dup {
			res.Status = StatusDuplicate
			continue
		}
		inBatch[key] = i
		source := ""
		if u.SourceURL != "" {
			if n, err := s.norm.Normalize(u.SourceURL); err == nil {
				source = n
			}
		}
		m := meta{Source: source, Crawl: req.CrawlID}
		if !u.DiscoveredAt.IsZero() {
			m.Discovered = u.DiscoveredAt.UnixMilli()
		}
		mb, _ := json.Marshal(m) // strings and an integer: cannot fail
		if len(mb) > maxEntryBytes {
			// A source URL longer than the frontier keeps: drop it.
			m.Source, source = "", ""
			mb, _ = json.Marshal(m)
		}
		cands = append(cands, candidate{
			idx: i, norm: norm, host: host, key: key, source: source, depth: u.Depth,
			entry: frontier.Entry{URL: norm, Host: host, Priority: u.Priority, Depth: u.Depth, Meta: mb},
		})
	}

	// The seen test, the enqueue and the seen update run under one lock,
	// in that order: two submissions of one URL cannot both pass the test,
	// and a crash between the enqueue and the seen update queues a URL
	// that a resubmission may queue again rather than losing it.
	s.submitMu.Lock()
	var add []*candidate
	for i := range cands {
		c := &cands[i]
		res := &resp.Results[c.idx]
		seen, err := s.seen.ContainsKey(c.key)
		if err != nil {
			s.submitMu.Unlock()
			return SubmitResponse{}, fmt.Errorf("seen set: %w", err)
		}
		if seen {
			res.Status = StatusDuplicate
			continue
		}
		if s.cfg.Traps != nil {
			if v := s.cfg.Traps.JudgeAt(now, trap.Candidate{URL: c.norm, Source: c.source, Depth: c.depth}); v.Rejected() {
				res.Status, res.Reason = StatusRejected, v.Reason
				s.hist.Rejected(c.norm, v.Reason)
				continue
			}
		}
		add = append(add, c)
	}
	if len(add) > 0 {
		entries := make([]frontier.Entry, len(add))
		for i, c := range add {
			entries[i] = c.entry
		}
		if err := s.f.AddAt(now, entries...); err != nil {
			s.submitMu.Unlock()
			return SubmitResponse{}, err
		}
		s.markSeen(add)
	}
	s.submitMu.Unlock()

	c := s.stats
	c.mu.Lock()
	for _, a := range add {
		resp.Results[a.idx].Status = StatusAccepted
		c.queueLocked(min(max(s.prio.Band(&a.entry, s.bands), 0), s.bands-1), 1)
		c.hostKeys[hostKey(a.host)] = struct{}{}
	}
	for _, res := range resp.Results {
		switch res.Status {
		case StatusAccepted:
			resp.Accepted++
		case StatusDuplicate:
			resp.Duplicates++
		case StatusRejected:
			resp.Rejected++
		}
	}
	c.urls.Discovered += int64(resp.Accepted)
	trapped := 0
	for _, res := range resp.Results {
		if res.Status == StatusRejected && !isReasonOf(res.Reason) {
			trapped++
		}
	}
	c.urls.TrapRejected += int64(trapped)
	c.errs.Trap += int64(trapped)
	c.mu.Unlock()

	for _, a := range add {
		s.hist.Accepted(a.norm, a.host)
	}
	var linked []string
	for i, u := range req.URLs {
		if res := resp.Results[i]; u.SourceURL != "" && res.Status != StatusRejected {
			linked = append(linked, res.Normalized)
		}
	}
	s.hist.AddInLinks(linked...)
	if len(add) > 0 {
		s.notify()
	}
	return resp, nil
}

// markSeen adds the keys of add to the seen set in one batch, which a
// durable store commits with one sync. A failure is logged: the URLs are
// queued, and at worst a resubmission queues them again.
func (s *Server) markSeen(add []*candidate) {
	keys := make([]uint64, len(add))
	for i, c := range add {
		keys[i] = c.key
	}
	if err := s.seen.AddKeys(keys); err != nil {
		s.cfg.Logger.Error("frontierapi: seen set write failed", "urls", len(add), "first", add[0].norm, "err", err)
	}
}

// Rejection reasons that are not trap verdicts.
const (
	reasonInvalidURL  = "invalid_url"
	reasonUnsupported = "unsupported_scheme"
	reasonTooLong     = "too_long"
	reasonDepth       = "invalid_depth"
	reasonPriority    = "invalid_priority"
)

func rejectReason(err error) string {
	switch {
	case errors.Is(err, urlnorm.ErrTooLong):
		return reasonTooLong + ": " + err.Error()
	case errors.Is(err, urlnorm.ErrUnsupportedScheme):
		return reasonUnsupported + ": " + err.Error()
	default:
		return reasonInvalidURL + ": " + err.Error()
	}
}

// isReasonOf reports whether a rejection reason is one of the service's own
// (not a trap rule's).
func isReasonOf(reason string) bool {
	for _, p := range []string{reasonInvalidURL, reasonUnsupported, reasonTooLong, reasonDepth, reasonPriority} {
		if len(reason) >= len(p) && reason[:len(p)] == p {
			return true
		}
	}
	return false
}

// discoveredAt decodes the discovery time of a meta record.
func (m meta) discoveredAt() time.Time {
	if m.Discovered == 0 {
		return time.Time{}
	}
	return time.UnixMilli(m.Discovered).UTC()
}
