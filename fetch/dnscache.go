package fetch

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"
)

// Resolver looks up the addresses of a host name. ttl is how long the answer
// may be cached; zero means the resolver does not know, and the cache uses
// DNSConfig.DefaultTTL.
type Resolver interface {
	Resolve(ctx context.Context, host string) (addrs []netip.Addr, ttl time.Duration, err error)
}

// NetResolver adapts a *net.Resolver (nil means net.DefaultResolver). The
// standard resolver does not expose record TTLs, so it reports ttl 0.
type NetResolver struct {
	Resolver *net.Resolver
}

// Resolve looks host up with the wrapped resolver.
func (r NetResolver) Resolve(ctx context.Context, host string) ([]netip.Addr, time.Duration, error) {
	res := r.Resolver
	if res == nil {
		res = net.DefaultResolver
	}
	addrs, err := res.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, 0, err
	}
	return addrs, 0, nil
}

// DNSConfig configures a DNSCache. Zero fields take the documented defaults.
type DNSConfig struct {
	// Resolver answers cache misses. Default: NetResolver{}, the system
	// resolver, which reports no TTLs (DefaultTTL applies); StubResolver
	// asks DNS servers directly and reports each answer's TTL.
	Resolver Resolver
	// DefaultTTL is used when the resolver reports no TTL. Default 5 min.
	DefaultTTL time.Duration
	// MinTTL and MaxTTL clamp every positive answer's TTL. Defaults 30 s and
	// 1 h: short TTLs (often 0–30 s from load balancers) would otherwise cost
	// a lookup per fetch at crawl rates, and a very long one would pin a
	// host to an address long after it moved.
	MinTTL, MaxTTL time.Duration
	// NegativeTTL is how long a failed lookup is remembered, so a dead name
	// is not re-queried for every queued URL. Default 30 s.
	NegativeTTL time.Duration
	// LookupTimeout bounds one resolver call. Default 10 s.
	LookupTimeout time.Duration
	// MaxEntries bounds the cache; the least recently used entry is evicted
	// first. Default 10000.
	MaxEntries int
	// FailureThreshold is how many consecutive connection failures to a
	// host's cached addresses invalidate its entry, so the next dial looks
	// the name up again (the host may have moved). Default 3.
	FailureThreshold int
	// Now returns the current time for expiry; nil means time.Now.
	Now func() time.Time
}

func (c *DNSConfig) ensureDefaults() {
	if c.Resolver == nil {
		c.Resolver = NetResolver{}
	}
	if c.DefaultTTL <= 0 {
		c.DefaultTTL = 5 * time.Minute
	}
	if c.MinTTL <= 0 {
		c.MinTTL = 30 * time.Second
	}
	if c.MaxTTL <= 0 {
		c.MaxTTL = time.Hour
	}
	if c.MaxTTL < c.MinTTL {
		c.MaxTTL = c.MinTTL
	}
	if c.NegativeTTL <= 0 {
		c.NegativeTTL = 30 * time.Second
	}
	if c.LookupTimeout <= 0 {
		c.LookupTimeout = 10 * time.Second
	}
	if c.MaxEntries <= 0 {
		c.MaxEntries = 10000
	}
	if c.FailureThreshold <= 0 {
		c.FailureThreshold = 3
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// DNSCache is a bounded, TTL-aware cache of host name lookups with negative
// caching and single-flight: however many goroutines ask for a name at
// once, the resolver is called once and all of them get its answer.
//
// Lookups run on goroutines owned by the cache, so one caller giving up
// (its context ends) does not fail the others waiting for the same name.
// Close stops them. A DNSCache is safe for concurrent use.
type DNSCache struct {
	cfg    DNSConfig
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	entries map[string]*list.Element // of *dnsEntry
	lru     list.List                // front = most recently used
	calls   int64                    // resolver calls, for Stats
	closed  bool
}

type dnsEntry struct {
	host     string
	addrs    []netip.Addr
	err      error
	expires  time.Time
	done     chan struct{} // closed when the lookup in flight finishes; nil when settled
	failures int           // consecutive connection failures
}

// NewDNSCache returns an empty cache. Call Close when done with it.
func NewDNSCache(cfg DNSConfig) *DNSCache {
	cfg.ensureDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	return &DNSCache{cfg: cfg, ctx: ctx, cancel: cancel, entries: make(map[string]*list.Element)}
}

// errCacheClosed is returned by lookups on a closed cache.
var errCacheClosed = errors.New("fetch: DNS cache closed")

// Lookup returns the addresses of host, from the cache when a fresh answer
// (positive or negative) is there. An IP literal is returned as is. The
// returned slice is shared with the cache and must not be modified.
func (c *DNSCache) Lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	done, e := c.start(host)
	if done == nil {
		return e.addrs, e.err
	}
	select {
	case <-done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	c.mu.Lock()
	addrs, err := e.addrs, e.err
	c.mu.Unlock()
	return addrs, err
}

// start returns the settled entry for host (done == nil), or the channel of
// the lookup in flight for it, starting one if needed.
func (c *DNSCache) start(host string) (<-chan struct{}, *dnsEntry) {
	now := c.cfg.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, &dnsEntry{err: errCacheClosed}
	}
	if el, ok := c.entries[host]; ok {
		e := el.Value.(*dnsEntry)
		c.lru.MoveToFront(el)
		if e.done != nil {
			return e.done, e
		}
		if now.Before(e.expires) {
			return nil, e
		}
		c.removeLocked(el)
	}
	e := &dnsEntry{host: host, done: make(chan struct{})}
	c.entries[host] = c.lru.PushFront(e)
	c.calls++
	c.evictLocked()
	c.wg.Add(1)
	go c.resolve(e)
	return e.done, e
}

// resolve runs one resolver call for e and settles it.
func (c *DNSCache) resolve(e *dnsEntry) {
	defer c.wg.Done()
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.LookupTimeout)
	addrs, ttl, err := c.cfg.Resolver.Resolve(ctx, e.host)
	cancel()
	if err == nil && len(addrs) == 0 {
		err = &net.DNSError{Err: "no addresses", Name: e.host, IsNotFound: true}
	}
	now := c.cfg.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		e.err = fmt.Errorf("fetch: resolve %s: %w", e.host, err)
		e.expires = now.Add(c.cfg.NegativeTTL)
	} else {
		if ttl <= 0 {
			ttl = c.cfg.DefaultTTL
		}
		ttl = min(max(ttl, c.cfg.MinTTL), c.cfg.MaxTTL)
		e.addrs = addrs
		e.expires = now.Add(ttl)
	}
	if c.ctx.Err() != nil {
		// Closing cancelled the lookup; do not remember that as an answer.
		e.expires = now
	}
	close(e.done)
	e.done = nil
}

// Prefetch starts lookups for hosts that are not cached yet, without
// waiting, so that their answers are ready when the hosts are fetched.
func (c *DNSCache) Prefetch(hosts ...string) {
	for _, h := range hosts {
		if _, err := netip.ParseAddr(h); err == nil {
			continue
		}
		c.start(h)
	}
}

// Invalidate drops host's entry, so the next lookup asks the resolver.
func (c *DNSCache) Invalidate(host string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[host]; ok && el.Value.(*dnsEntry).done == nil {
		c.removeLocked(el)
	}
}

// ReportConnect records the outcome of a connection attempt to one of host's
// addresses. After DNSConfig.FailureThreshold consecutive failures the entry
// is invalidated; a success resets the count.
func (c *DNSCache) ReportConnect(host string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[host]
	if !ok {
		return
	}
	e := el.Value.(*dnsEntry)
	if e.done != nil {
		return
	}
	if err == nil {
		e.failures = 0
		return
	}
	e.failures++
	if e.failures >= c.cfg.FailureThreshold {
		c.removeLocked(el)
	}
}

// Len returns the number of cached names (including lookups in flight).
func (c *DNSCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// resolverCalls returns how many resolver calls the cache has started (for
// the tests).
func (c *DNSCache) resolverCalls() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

// Close cancels lookups in flight and waits for their goroutines to end.
// Lookups after Close fail.
func (c *DNSCache) Close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
}

// removeLocked unlinks el. Requires c.mu held.
func (c *DNSCache) removeLocked(el *list.Element) {
	delete(c.entries, el.Value.(*dnsEntry).host)
	c.lru.Remove(el)
}

// evictLocked drops settled entries from the back of the LRU list until the
// cache fits. Lookups in flight are never evicted, so the bound can be
// exceeded by the number of concurrent lookups. Requires c.mu held.
func (c *DNSCache) evictLocked() {
	for el := c.lru.Back(); el != nil && len(c.entries) > c.cfg.MaxEntries; {
		prev := el.Prev()
		if el.Value.(*dnsEntry).done == nil {
			c.removeLocked(el)
		}
		el = prev
	}
}
