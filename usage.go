package crawlkit

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlkit/crawlkit/archive/warc"
	"github.com/crawlkit/crawlkit/usage"
)

// Usage preferences (package usage): what a site says about how its
// content may be used, read from robots.txt, the response header, the
// HTML and, on request, TDMRep's /.well-known/tdmrep.json, and applied as
// Config.Usage asks.

// UsageAction says what the crawl does with the usage preferences of the
// pages it meets.
type UsageAction uint8

const (
	// UsageOff reads no preferences: Page.Usage stays empty.
	UsageOff UsageAction = iota
	// UsageMark fetches and hands on every page as usual, with Page.Usage
	// saying what its site allows; pages whose signals disallow
	// UsagePolicy.Purpose are counted in Stats.Usage.Disallowed.
	UsageMark
	// UsageSkip keeps content whose site disallows UsagePolicy.Purpose out
	// of the crawl: a URL whose robots.txt signals (Content-Usage,
	// Content-Signal) disallow it is not fetched (ReasonUsage); a page whose
	// header, HTML or tdmrep.json disallows it, known only once fetched, is
	// not handed to the Handler or the Sink (Stats.Usage.Withheld), but its
	// links are followed: the signals govern the use of this content, not
	// the discovery of other pages, which robots.txt Allow and Disallow
	// govern.
	UsageSkip
)

// UsagePolicy configures the reading and applying of usage preferences.
// The zero value reads none and changes nothing.
type UsagePolicy struct {
	// Action says what to do with them; UsageOff (the zero value) ignores
	// the rest.
	Action UsageAction
	// Purpose is the use the crawl makes of the content (usage.Search by
	// default, usage.AITraining, usage.AIInput).
	Purpose usage.Purpose
	// TDMRep fetches each host's /.well-known/tdmrep.json (TDMRep §3.1)
	// once per TDMRepTTL, at most usage.MaxTDMFileBytes of it, and applies
	// its rules to the host's pages. It costs one request per host, so it
	// is off by default; a failing fetch means nothing is known from the
	// file, and the crawl goes on. Each fetch counts in
	// Stats.Usage.TDMRepFetches.
	TDMRep bool
	// TDMRepTTL is how long a host's tdmrep.json is kept (default 24 h, as
	// robots.txt; a failed fetch is tried again after a tenth of it).
	TDMRepTTL time.Duration
}

// UsageStats counts what the usage preferences did.
type UsageStats struct {
	// Disallowed counts the pages fetched whose signals disallow
	// Config.Usage.Purpose (marked, or withheld).
	Disallowed int64 `json:"disallowed"`
	// Withheld counts the pages fetched but not handed to the Handler and
	// Sink (UsageSkip).
	Withheld int64 `json:"withheld"`
	// TDMRepFetches counts the requests for tdmrep.json files, redirect
	// hops included.
	TDMRepFetches int64 `json:"tdmrep_fetches"`
}

// usageState is the crawl's usage bookkeeping; its zero value is ready.
type usageState struct {
	disallowed, withheld, tdmFetches atomic.Int64
	logged                           hostSet // hosts whose usage skip was logged at Info

	mu  sync.Mutex
	tdm map[string]*tdmEntry // by scheme://host
}

// tdmEntry is one origin's tdmrep.json: ready is closed once file (nil
// when unreadable) is set.
type tdmEntry struct {
	ready   chan struct{}
	file    *usage.TDMFile
	expires time.Time
}

const (
	defaultTDMRepTTL = 24 * time.Hour
	maxTDMOrigins    = 1 << 14
	maxTDMRedirects  = 5
)

// check reports a UsagePolicy New must refuse.
func (u UsagePolicy) check() error {
	if u.Action > UsageSkip {
		return fmt.Errorf("%w: Usage.Action %d is not UsageOff, UsageMark or UsageSkip", ErrConfig, u.Action)
	}
	if strings.HasPrefix(u.Purpose.String(), "Purpose(") {
		return fmt.Errorf("%w: Usage.Purpose %d is not a purpose of package usage", ErrConfig, u.Purpose)
	}
	if u.TDMRepTTL < 0 {
		return fmt.Errorf("%w: Usage.TDMRepTTL %v is negative", ErrConfig, u.TDMRepTTL)
	}
	return nil
}

func (s *usageState) stats() UsageStats {
	return UsageStats{Disallowed: s.disallowed.Load(), Withheld: s.withheld.Load(), TDMRepFetches: s.tdmFetches.Load()}
}

// usageGate applies UsageSkip before a fetch: it reports ReasonUsage when
// robots.txt's usage signals for rawURL disallow the configured purpose.
func (cr *Crawler) usageGate(ctx context.Context, rawURL, host string) Reason {
	up := cr.cfg.Usage
	if up.Action != UsageSkip || cr.cfg.DangerouslyIgnoreRobotsTxt {
		return reasonNone
	}
	var c usage.Collector
	cr.robotsUsage(ctx, &c, rawURL)
	if s := c.Signals(); s.Verdict(up.Purpose) == usage.Disallowed {
		if !cr.usage.logged.has(host) {
			cr.usage.logged.add(host)
			cr.cfg.Logger.Info("URLs not fetched: robots.txt usage preferences disallow Config.Usage.Purpose",
				"host", host, "purpose", up.Purpose.String(), "example", rawURL, "signals", sourcesOf(s))
		}
		return ReasonUsage
	}
	return reasonNone
}

func sourcesOf(s usage.Signals) []string {
	out := make([]string, len(s.Sources))
	for i, src := range s.Sources {
		out[i] = string(src.Kind) + ": " + src.Value
	}
	return out
}

// robotsUsage adds to c the Content-Usage rules that apply to rawURL and
// the Content-Signal lines of the crawler's groups in its host's
// robots.txt (which the gate fetched already).
func (cr *Crawler) robotsUsage(ctx context.Context, c *usage.Collector, rawURL string) {
	pol, err := cr.robots.Policy(ctx, rawURL)
	if err != nil {
		return
	}
	a, err := pol.Agent(cr.token)
	if err != nil {
		return
	}
	for _, cu := range a.ContentUsage(rawURL) {
		st, _ := usage.ParseContentUsage(cu.Preference)
		c.Add(usage.KindRobotsContentUsage, cu.Preference, st)
	}
	for _, cs := range a.ContentSignals() {
		c.Add(usage.KindRobotsContentSignal, cs.Value, usage.ParseContentSignal(cs.Value))
	}
}

// readUsage fills p.Usage, in TDMRep's order (file, header, HTML) after
// robots.txt, and reports whether UsageSkip withholds the page from the
// Handler and the Sink.
func (cr *Crawler) readUsage(ctx context.Context, p *Page) (withhold bool) {
	up := cr.cfg.Usage
	if up.Action == UsageOff {
		return false
	}
	target := p.FinalURL
	if target == "" {
		target = p.URL
	}
	c := usage.Collector{Token: cr.token, Now: cr.cfg.Now}
	if !cr.cfg.DangerouslyIgnoreRobotsTxt {
		cr.robotsUsage(ctx, &c, target)
	}
	if up.TDMRep {
		c.AddTDM(usage.KindTDMFile, cr.tdmFile(ctx, target).Lookup(target))
	}
	c.AddHeader(p.Header)
	if !p.Media && isHTML(p.ContentType) {
		c.AddHTML(p.Body)
	}
	p.Usage = c.Signals()
	if p.Usage.Verdict(up.Purpose) != usage.Disallowed {
		return false
	}
	cr.usage.disallowed.Add(1)
	if up.Action != UsageSkip {
		return false
	}
	cr.usage.withheld.Add(1)
	if cr.debug {
		cr.cfg.Logger.Debug("page withheld from the Handler and Sink", "url", p.URL, "reason", ReasonUsage.String(),
			"purpose", up.Purpose.String(), "signals", sourcesOf(p.Usage))
	}
	return true
}

// tdmFile returns the tdmrep.json of target's origin, fetching it once per
// TDMRepTTL; concurrent callers share one fetch. Nil when it is missing or
// unreadable.
func (cr *Crawler) tdmFile(ctx context.Context, target string) *usage.TDMFile {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return nil
	}
	origin := u.Scheme + "://" + u.Host
	now := cr.cfg.Now()
	s := &cr.usage
	s.mu.Lock()
	e := s.tdm[origin]
	if e != nil {
		select {
		case <-e.ready:
			if now.After(e.expires) {
				e = nil
			}
		default: // being fetched
		}
	}
	if e != nil {
		s.mu.Unlock()
		select {
		case <-e.ready:
			return e.file
		case <-ctx.Done():
			return nil
		}
	}
	if s.tdm == nil {
		s.tdm = map[string]*tdmEntry{}
	}
	if len(s.tdm) >= maxTDMOrigins {
		for k := range s.tdm { // forget an arbitrary origin
			delete(s.tdm, k)
			break
		}
	}
	e = &tdmEntry{ready: make(chan struct{})}
	s.tdm[origin] = e
	s.mu.Unlock()

	ttl := cr.cfg.Usage.TDMRepTTL
	if ttl <= 0 {
		ttl = defaultTDMRepTTL
	}
	e.file = cr.fetchTDM(ctx, origin+usage.TDMPath)
	if e.file == nil {
		ttl /= 10
	}
	e.expires = cr.cfg.Now().Add(ttl)
	close(e.ready)
	return e.file
}

// fetchTDM fetches and parses a tdmrep.json through the robots.txt
// fetcher (address guard, politeness, limits), following up to
// maxTDMRedirects redirects (TDMRep §3.1 allows a sequence of them).
func (cr *Crawler) fetchTDM(ctx context.Context, rawURL string) *usage.TDMFile {
	for range maxTDMRedirects + 1 {
		if err := cr.waitRate(ctx); err != nil {
			return nil
		}
		cr.usage.tdmFetches.Add(1)
		resp, err := cr.robotsFetcher.Fetch(ctx, rawURL)
		if err != nil {
			if cr.debug {
				cr.cfg.Logger.Debug("tdmrep.json not fetched", "url", rawURL, "err", err)
			}
			return nil
		}
		switch {
		case resp.StatusCode >= 300 && resp.StatusCode < 400:
			next, err := resp.FinalURL.Parse(resp.Header.Get("Location"))
			if err != nil || next.Scheme != "http" && next.Scheme != "https" {
				return nil
			}
			rawURL = next.String()
			continue
		case resp.StatusCode != http.StatusOK:
			return nil
		}
		f, err := usage.ParseTDMFile(resp.Body)
		if err != nil {
			if cr.debug {
				cr.cfg.Logger.Debug("tdmrep.json unreadable", "url", rawURL, "err", err)
			}
			return nil
		}
		return f
	}
	return nil
}

// writeUsage archives p's usage preferences, if any, as a metadata record
// whose application/json block is {"usage": Page.Usage}, concurrent to the
// response record res describes; a revisit's metadata refers to the
// response it repeats instead (WARC-Refers-To), whose ID is the one
// Result gives.
func (s *WARCSink) writeUsage(p *Page, target string, res warc.Result) error {
	if p.Usage.IsZero() {
		return nil
	}
	body, err := json.Marshal(struct {
		Usage *usage.Signals `json:"usage"`
	}{&p.Usage})
	if err != nil {
		return err
	}
	md := &warc.Metadata{URL: target, Date: p.Fetched, ContentType: "application/json", Body: body}
	if res.Revisit {
		md.RefersTo = res.Ref.RecordID
	} else {
		md.ConcurrentTo = res.Ref.RecordID
	}
	_, err = s.w.WriteMetadata(md)
	return err
}
