package frontierapi

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/crawlkit/crawlkit/bloom"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/internal/hostcheck"
	"github.com/crawlkit/crawlkit/robots"
	"github.com/crawlkit/crawlkit/service/dashboard"
	"github.com/crawlkit/crawlkit/trap"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// Defaults of Config.
const (
	DefaultMaxBodyBytes = 4 << 20 // bytes of one request body
	DefaultMaxURLs      = 10000   // URLs in one submit request
	MaxBatchSize        = 1000    // largest batch_size of GET /next (the seed API's limit)
	DefaultBatchSize    = 10
	DefaultMaxWait      = 60 * time.Second // longest timeout_ms honoured
	DefaultAgent        = "crawlkit"
	DefaultIdleAfter    = time.Minute
)

// Errors returned by New.
var (
	ErrNoToken = errors.New("frontierapi: Config.Token is empty")
	ErrConfig  = errors.New("frontierapi: invalid config")
)

// Config configures a Server. Token is required; the zero value of every
// other field is a usable default.
type Config struct {
	// Token is the bearer token every request must carry
	// ("Authorization: Bearer <Token>"). Required.
	Token string

	// Frontier configures the frontier the service runs. Set Store to a
	// durable store (storage/pebble's DB.Frontier()) so that accepted URLs
	// survive a crash. If Politeness is nil the service spaces the
	// fetches of a host by Delay, raised to the host's robots.txt
	// Crawl-delay; with a Politeness of your own, Crawl-delay is yours to
	// apply. Options.Now is replaced by Config.Now.
	Frontier frontier.Config
	// Delay is the least time between the settlement of one lease of a
	// host and the next lease of that host, when Frontier.Politeness is
	// nil. Zero means frontier.DefaultDelay (1 s); negative means none
	// (Crawl-delay still applies).
	Delay time.Duration

	// Seen deduplicates submitted URLs. Give it a bloom.Store that is as
	// durable as the frontier's Store (storage/pebble's DB.SeenStore()),
	// or a restarted service will queue resubmitted URLs again. Nil means
	// an in-memory set.
	Seen *bloom.Set
	// Normalize is the normalization profile. Nil means urlnorm.Crawler().
	Normalize *urlnorm.Config
	// Traps, if set, rejects spider-trap URLs at submission and learns
	// from the SimHash of fetched pages.
	Traps *trap.Detector
	// Robots, if set, is consulted for every leased URL: disallowed URLs
	// are settled as failed (counted as blocked by robots) instead of
	// being handed out, hosts with an unreachable robots.txt are left
	// alone until it is fetched again (their URLs are queued again
	// without counting an attempt, so an outage never drops them; past
	// the cache's UnreachableLimit its Fallback decides, and URLs it
	// disallows are settled as failed), and Crawl-delay spaces the
	// host's leases.
	Robots *robots.Cache
	// Agent is the robots.txt product token. Empty means DefaultAgent.
	Agent string
	// Resolve, if set, fills LeasedURL.IP: it returns an address of host
	// (without port), or an error, which leaves IP empty.
	Resolve func(ctx context.Context, host string) (string, error)
	// History records fetches for the URL and host analysis views. Nil
	// means a dashboard.History with its default bounds.
	History *dashboard.History

	// MaxBodyBytes bounds a request body. Zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxURLs bounds the URLs of one submit and the results of one
	// results request. Zero means DefaultMaxURLs.
	MaxURLs int
	// MaxWait bounds timeout_ms. Zero means DefaultMaxWait.
	MaxWait time.Duration
	// IdleAfter is how long a worker holding no lease still counts as
	// idle (rather than gone). Zero means DefaultIdleAfter.
	IdleAfter time.Duration
	// Now is the service's clock. Nil means time.Now.
	Now func() time.Time
	// Logger receives errors the service cannot report to a client (a
	// failed seen-set write after a successful enqueue). Nil discards.
	Logger *slog.Logger
	// AllowedHosts are further names requests may carry in their Host and
	// Origin headers, besides the address they came in on (see Host
	// check in the package documentation): a host name or IP address,
	// which matches with any port, or a host:port, which matches that
	// port only; "*" turns the check off. An invalid entry is an error.
	AllowedHosts []string
}

// Server is the frontier service: an http.Handler serving the API over one
// frontier it owns. Create it with New and stop it with Close.
type Server struct {
	cfg      Config
	f        *frontier.Frontier
	seen     *bloom.Set
	norm     *urlnorm.Config
	prio     frontier.Prioritizer
	bands    int
	polite   *delayPoliteness // nil with a caller's Politeness
	hist     *dashboard.History
	hosts    *hostcheck.Checker
	tokenSum [sha256.Size]byte
	started  time.Time
	stats    *counters

	submitMu sync.Mutex // serializes the seen-test, enqueue and seen-add of submissions

	mu      sync.Mutex
	wake    chan struct{} // closed and replaced when URLs may have become ready
	batches map[string]*batch
	recent  *recentLeases // lease IDs no longer in batches, for late Retry-Afters
	pruneAt time.Time
	closed  bool
}

// batch is one lease_id: the frontier leases handed out together.
type batch struct {
	id      string
	worker  string
	expires time.Time
	items   map[string]*frontier.Lease // by URL; removed when settled
	// hosts holds the host of every URL handed out under the ID, by
	// recentLeases.urlKey; never changed once the batch is registered.
	hosts map[uint64]string
	// ended says, by recentLeases.urlKey, why a URL handed out under the
	// ID is no longer in items: skipAlreadySettled or skipLeaseExpired.
	ended map[uint64]string
	ttl   time.Duration // the lease duration
}

// New starts a frontier with cfg.Frontier and returns the Server over it.
// With a Store, it counts the stored queue by band (one pass over the
// store's queued keys) so the queue figures include URLs from before a
// restart. New starts no goroutines; Close closes the frontier (not its
// Store, which the caller opened).
func New(cfg Config) (*Server, error) {
	if cfg.Token == "" {
		return nil, ErrNoToken
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Agent == "" {
		cfg.Agent = DefaultAgent
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.MaxURLs <= 0 {
		cfg.MaxURLs = DefaultMaxURLs
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = DefaultMaxWait
	}
	if cfg.IdleAfter <= 0 {
		cfg.IdleAfter = DefaultIdleAfter
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if !robots.ValidProductToken(cfg.Agent) {
		return nil, fmt.Errorf("%w: Agent %q is not a valid robots.txt product token", ErrConfig, cfg.Agent)
	}
	hosts, err := hostcheck.New(cfg.AllowedHosts)
	if err != nil {
		return nil, fmt.Errorf("%w: AllowedHosts: %v", ErrConfig, err)
	}
	s := &Server{
		cfg:      cfg,
		seen:     cfg.Seen,
		norm:     cfg.Normalize,
		hist:     cfg.History,
		hosts:    hosts,
		tokenSum: sha256.Sum256([]byte(cfg.Token)),
		started:  cfg.Now(),
		wake:     make(chan struct{}),
		batches:  map[string]*batch{},
		recent:   newRecentLeases(),
	}
	if s.norm == nil {
		crawler := urlnorm.Crawler()
		s.norm = &crawler
	}
	if s.hist == nil {
		s.hist = dashboard.NewHistory(dashboard.HistoryConfig{})
	}
	if s.seen == nil {
		// Exact: a filter false positive would refuse a new URL as known.
		set, err := bloom.New(bloom.Config{Store: bloom.NewMemoryStore()})
		if err != nil {
			return nil, fmt.Errorf("frontierapi: seen set: %w", err)
		}
		s.seen = set
	}
	opts := cfg.Frontier
	opts.Now = cfg.Now
	if opts.Politeness == nil {
		d := cfg.Delay
		switch {
		case d == 0:
			d = frontier.DefaultDelay
		case d < 0:
			d = 0
		}
		s.polite = &delayPoliteness{base: d, delays: map[string]time.Duration{}}
		opts.Politeness = s.polite
	}
	s.bands = opts.Bands
	if s.bands < 0 || s.bands > 16 {
		// Checked here, before the counters are sized by it.
		return nil, fmt.Errorf("%w: Frontier.Bands %d outside 1..16", ErrConfig, s.bands)
	}
	if s.bands == 0 {
		s.bands = 4
	}
	s.prio = opts.Prioritizer
	if s.prio == nil {
		s.prio = frontier.BFS{}
	}
	s.stats = newCounters(s.bands, s.started)
	if opts.Store != nil {
		if err := s.countStored(opts.Store); err != nil {
			return nil, err
		}
	}
	f, err := frontier.New(opts)
	if err != nil {
		return nil, err
	}
	s.f = f
	return s, nil
}

// countStored counts the queued URLs of a store by band, from the key layout
// the frontier documents: "q" host 0x00 band seq.
func (s *Server) countStored(st frontier.Store) error {
	start := []byte("q")
	end := []byte("r")
	for {
		kvs, err := st.Scan(context.Background(), start, end, 4096)
		if err != nil {
			return fmt.Errorf("frontierapi: counting the stored queue: %w", err)
		}
		for _, kv := range kvs {
			i := strings.IndexByte(string(kv.Key), 0)
			if i < 0 || i+1 >= len(kv.Key) {
				continue
			}
			s.stats.queue(min(int(kv.Key[i+1]), s.bands-1), 1)
		}
		if len(kvs) < 4096 {
			return nil
		}
		start = append(append([]byte(nil), kvs[len(kvs)-1].Key...), 0)
	}
}

// Frontier returns the frontier the service runs, for callers that want to
// add seeds or read its Stats directly.
func (s *Server) Frontier() *frontier.Frontier { return s.f }

// History returns the History the service records into.
func (s *Server) History() *dashboard.History { return s.hist }

// Close stops the service: waiting long-polls return at once and later
// requests get 503. It closes the frontier; unsettled leases are queued again
// by the next Server on the same durable Store. Idempotent.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.wake)
	s.mu.Unlock()
	return s.f.Close()
}

// notify wakes every waiting long-poll.
func (s *Server) notify() {
	s.mu.Lock()
	if !s.closed {
		close(s.wake)
		s.wake = make(chan struct{})
	}
	s.mu.Unlock()
}

// ServeHTTP checks the request's Host and Origin, authenticates it and
// serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := s.hosts.Check(r); err != nil {
		writeError(w, http.StatusForbidden, CodeForbiddenHost, "frontierapi: "+err.Error())
		return
	}
	if !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="crawlkit"`)
		writeError(w, http.StatusUnauthorized, CodeUnauthorized, "missing or invalid bearer token")
		return
	}
	// HEAD is allowed only where GET has no side effects: a HEAD of
	// /next would lease URLs whose response body is never sent.
	var allow []string
	var h func(http.ResponseWriter, *http.Request)
	switch r.URL.Path {
	case "/api/v1/frontier/urls":
		allow, h = []string{http.MethodPost}, s.serveSubmit
	case "/api/v1/frontier/next":
		allow, h = []string{http.MethodGet}, s.serveNext
	case "/api/v1/frontier/results":
		allow, h = []string{http.MethodPost}, s.serveResults
	case "/api/v1/stats":
		allow, h = []string{http.MethodGet, http.MethodHead}, s.serveStats
	default:
		writeError(w, http.StatusNotFound, CodeNotFound, "no endpoint "+r.URL.Path)
		return
	}
	if !slices.Contains(allow, r.Method) {
		methods := strings.Join(allow, ", ")
		w.Header().Set("Allow", methods)
		writeError(w, http.StatusMethodNotAllowed, CodeMethodNotAllowed, r.URL.Path+" accepts "+methods+" only")
		return
	}
	if s.isClosed() {
		writeError(w, http.StatusServiceUnavailable, CodeUnavailable, "the service is shutting down")
		return
	}
	h(w, r)
}

// authorized compares the bearer token in constant time: both sides are
// hashed first, so neither the content nor the length of the token leaks
// through timing.
func (s *Server) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(h[len(prefix):])))
	return subtle.ConstantTimeCompare(got[:], s.tokenSum[:]) == 1
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// decodeBody reads a JSON body into v within the size limit, writing the
// error response itself when it fails.
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	body := http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	dec := json.NewDecoder(body)
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			writeError(w, http.StatusRequestEntityTooLarge, CodeBodyTooLarge,
				fmt.Sprintf("request body exceeds %d bytes", s.cfg.MaxBodyBytes))
		case errors.Is(err, io.EOF):
			writeError(w, http.StatusBadRequest, CodeInvalidJSON, "empty request body")
		default:
			writeError(w, http.StatusBadRequest, CodeInvalidJSON, "request body: "+err.Error())
		}
		return false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, CodeBodyTooLarge,
				fmt.Sprintf("request body exceeds %d bytes", s.cfg.MaxBodyBytes))
			return false
		}
		writeError(w, http.StatusBadRequest, CodeInvalidJSON, "request body: data after the JSON document")
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, ErrorResponse{Error: code, Message: msg})
}

// newLeaseID returns 128 random bits in hex: lease IDs are capabilities, so
// one worker cannot guess another's.
func newLeaseID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// delayPoliteness spaces a host's leases by a base delay raised to the
// host's Crawl-delay.
type delayPoliteness struct {
	base   time.Duration
	mu     sync.Mutex
	delays map[string]time.Duration
}

// maxDelayHosts bounds the hosts whose Crawl-delay is remembered; past it
// an arbitrary one is forgotten (and learned again from the robots cache at
// its next lease).
const maxDelayHosts = 100000

// ReadyAt implements frontier.Politeness.
func (p *delayPoliteness) ReadyAt(host string, finished time.Time) time.Time {
	p.mu.Lock()
	d := max(p.base, p.delays[host])
	p.mu.Unlock()
	return finished.Add(d)
}

func (p *delayPoliteness) set(host string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if d <= p.base {
		delete(p.delays, host)
		return
	}
	if _, ok := p.delays[host]; !ok && len(p.delays) >= maxDelayHosts {
		for h := range p.delays {
			delete(p.delays, h)
			break
		}
	}
	p.delays[host] = d
}
