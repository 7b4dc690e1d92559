package frontierapi

import (
	"fmt"
	"time"

	"github.com/crawlkit/crawlkit/service/dashboard"
)

// Wire types: the JSON documents of the API, shared by Server and Client.

// SubmitRequest is the body of POST /api/v1/frontier/urls.
type SubmitRequest struct {
	// CrawlID labels the URLs; it comes back with their leases.
	CrawlID string      `json:"crawl_id,omitempty"`
	URLs    []SubmitURL `json:"urls"`
}

// SubmitURL is one URL to queue.
type SubmitURL struct {
	// URL is absolute (http or https); the service normalizes it.
	URL string `json:"url"`
	// Priority is an importance score for the frontier's Prioritizer
	// (OPIC cash; ignored by the default breadth-first one).
	Priority float64 `json:"priority,omitempty"`
	// SourceURL is the page the URL was found on ("" for a seed).
	SourceURL string `json:"source_url,omitempty"`
	// Depth is the number of links from a seed (seeds are 0).
	Depth int `json:"depth,omitempty"`
	// DiscoveredAt is when the worker found the link.
	DiscoveredAt time.Time `json:"discovered_at,omitzero"`
}

// SubmitResponse answers POST /api/v1/frontier/urls with 202 Accepted.
type SubmitResponse struct {
	Accepted   int `json:"accepted"`
	Rejected   int `json:"rejected"`
	Duplicates int `json:"duplicates"`
	// Results has one entry per submitted URL, in request order.
	Results []SubmitResult `json:"results"`
}

// Submit statuses.
const (
	StatusAccepted  = "accepted"
	StatusDuplicate = "duplicate"
	StatusRejected  = "rejected"
)

// SubmitResult is what became of one submitted URL.
type SubmitResult struct {
	// Normalized is the URL's normalized form (empty if it could not be
	// normalized).
	Normalized string `json:"normalized,omitempty"`
	// Status is StatusAccepted, StatusDuplicate or StatusRejected.
	Status string `json:"status"`
	// Reason says why a URL was rejected: "invalid_url: …",
	// "unsupported_scheme: …", "too_long: …", "invalid_depth: …",
	// "invalid_priority: …" (negative) or the trap rule's reason.
	Reason string `json:"reason,omitempty"`
}

// NextResponse answers GET /api/v1/frontier/next.
type NextResponse struct {
	// LeaseID names the batch in POST /api/v1/frontier/results; empty
	// when URLs is empty.
	LeaseID string `json:"lease_id,omitempty"`
	// LeaseExpiresAt is when unsettled URLs of the batch go back to the
	// queue.
	LeaseExpiresAt time.Time   `json:"lease_expires_at,omitzero"`
	URLs           []LeasedURL `json:"urls"`
}

// LeasedURL is one URL handed to a worker.
type LeasedURL struct {
	URL  string `json:"url"`
	Host string `json:"host"`
	// IP is the host's address when the service resolved it.
	IP       string  `json:"ip,omitempty"`
	Depth    int     `json:"depth"`
	Priority float64 `json:"priority"`
	// Attempt counts earlier attempts that ended in a retry.
	Attempt      int       `json:"attempt"`
	SourceURL    string    `json:"source_url,omitempty"`
	CrawlID      string    `json:"crawl_id,omitempty"`
	DiscoveredAt time.Time `json:"discovered_at,omitzero"`
	// Robots is robots.txt's decision for the URL, when the service
	// checks robots.txt. The service hands out allowed URLs only.
	Robots *dashboard.RobotsDecision `json:"robots,omitempty"`
	// CrawlDelayMS is the host's Crawl-delay for the service's agent, in
	// milliseconds (0: none). The service already spaces leases of a host
	// by it; a worker holding several URLs of a host should too.
	CrawlDelayMS int64 `json:"crawl_delay_ms"`
}

// ResultsRequest is the body of POST /api/v1/frontier/results.
type ResultsRequest struct {
	LeaseID  string   `json:"lease_id"`
	WorkerID string   `json:"worker_id,omitempty"`
	Results  []Result `json:"results"`
}

// Result statuses.
const (
	ResultSuccess = "success"
	ResultError   = "error"
)

// Error kinds of a Result, which choose the error category.
const (
	KindNetwork = "network"
	KindTimeout = "timeout"
	KindHTTP    = "http"
)

// Result is the outcome of fetching one leased URL.
type Result struct {
	// URL is the leased URL, exactly as handed out.
	URL string `json:"url"`
	// Status is ResultSuccess or ResultError.
	Status string `json:"status"`
	// HTTPStatus is the final response's status, 0 if none arrived.
	HTTPStatus int `json:"http_status,omitempty"`
	// RetryAfter is the server's Retry-After, in seconds.
	RetryAfter float64 `json:"retry_after,omitempty"`
	// ContentHash identifies the body (for example "sha256:…"); at most
	// 128 bytes.
	ContentHash string `json:"content_hash,omitempty"`
	// SimHash is the 64-bit SimHash of the page's text as 16 hex digits.
	SimHash string `json:"simhash,omitempty"`
	// LinksFound is the number of links on the page.
	LinksFound int `json:"links_found,omitempty"`
	// Duplicate reports that the content duplicates an earlier page.
	Duplicate bool `json:"duplicate,omitempty"`
	// ErrorKind is KindNetwork, KindTimeout or KindHTTP for an error; ""
	// means KindHTTP when HTTPStatus is set, KindNetwork otherwise.
	ErrorKind string `json:"error_kind,omitempty"`
	// Error describes the failure (at most 1000 bytes are kept).
	Error string `json:"error,omitempty"`
	// DurationMS is how long the fetch took; Bytes the body size.
	DurationMS int64 `json:"duration_ms,omitempty"`
	Bytes      int64 `json:"bytes,omitempty"`
}

// ResultsResponse answers POST /api/v1/frontier/results.
type ResultsResponse struct {
	// Processed counts results that settled their URL.
	Processed int `json:"processed"`
	// RetriesScheduled counts URLs queued again for a retry.
	RetriesScheduled int `json:"retries_scheduled"`
	// Results has one entry per result, in request order.
	Results []ResultStatus `json:"results"`
}

// Settlements of a result.
const (
	OutcomeDone    = "done"
	OutcomeRetry   = "retry"
	OutcomeFailed  = "failed"
	OutcomeSkipped = "skipped"
)

// ResultStatus is what the service did with one result.
type ResultStatus struct {
	URL string `json:"url"`
	// Outcome is OutcomeDone, OutcomeRetry, OutcomeFailed, or
	// OutcomeSkipped when Error says why the result was not applied
	// ("not_in_lease", "lease_expired", "already_settled").
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
	// DueAt is when the URL is queued again: a retry's time, or a
	// recrawl's for a done URL; absent otherwise. It is the frontier's
	// own decision (backoff, MaxAttempts, Schedule), which the worker
	// cannot work out.
	DueAt time.Time `json:"due_at,omitzero"`
}

// Stats is the document of GET /api/v1/stats: the dashboard's Snapshot
// (its fields appear at the top level) plus the service's own figures.
type Stats struct {
	dashboard.Snapshot
	// Leased is the number of URLs held by workers now.
	Leased int64 `json:"leased"`
	// Started is when the service started.
	Started time.Time `json:"started"`
	// Frontier is the frontier's own counters.
	Frontier FrontierStats `json:"frontier"`
}

// FrontierStats mirrors frontier.Stats. Released counts the leases of URLs
// held back while their host's robots.txt was unreachable: the service gives
// those back unsettled, which counts no attempt.
type FrontierStats struct {
	Hosts       int    `json:"hosts"`
	InMemory    int    `json:"in_memory"`
	Delayed     int    `json:"delayed"`
	Leased      int    `json:"leased"`
	Added       uint64 `json:"added"`
	Leases      uint64 `json:"leases"`
	Succeeded   uint64 `json:"succeeded"`
	NotModified uint64 `json:"not_modified"`
	Retried     uint64 `json:"retried"`
	Failed      uint64 `json:"failed"`
	Dropped     uint64 `json:"dropped"`
	Recrawls    uint64 `json:"recrawls"`
	Expired     uint64 `json:"expired"`
	Released    uint64 `json:"released"`
	Corrupt     uint64 `json:"corrupt"`
}

// Error codes: the stable "error" member of every error response.
const (
	CodeUnauthorized     = "unauthorized"       // 401: missing or wrong bearer token
	CodeForbiddenHost    = "forbidden_host"     // 403: Host or Origin names neither this server nor an allowed host
	CodeNotFound         = "not_found"          // 404: no such endpoint
	CodeMethodNotAllowed = "method_not_allowed" // 405
	CodeBodyTooLarge     = "body_too_large"     // 413: body over the size limit
	CodeTooManyURLs      = "too_many_urls"      // 413: more URLs or results than allowed in one request
	CodeInvalidJSON      = "invalid_json"       // 400: body is not the expected JSON document
	CodeMissingParameter = "missing_parameter"  // 400: a required parameter or field is absent
	CodeInvalidParameter = "invalid_parameter"  // 400: a parameter or field has a bad value
	CodeUnknownLease     = "unknown_lease"      // 404: lease_id never issued, fully settled or expired
	CodeWrongWorker      = "wrong_worker"       // 409: lease_id belongs to another worker
	CodeUnavailable      = "unavailable"        // 503: the service is shutting down
	CodeStoreFailed      = "store_failed"       // 503: the store refused a write; retry later
)

// ErrorResponse is the body of every error response.
type ErrorResponse struct {
	// Error is one of the Code constants.
	Error string `json:"error"`
	// Message explains it for a human.
	Message string `json:"message"`
}

// APIError is the error a Client returns for an error response. Match it
// with errors.As and look at Code.
type APIError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Code is the response's "error" member (a Code constant), or
	// "http_<status>" when the body was not an ErrorResponse.
	Code    string
	Message string
}

// Error implements error.
func (e *APIError) Error() string {
	return fmt.Sprintf("frontierapi: %d %s: %s", e.StatusCode, e.Code, e.Message)
}
