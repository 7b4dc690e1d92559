// Package queuetest is the conformance kit for crawlkit.Queue
// implementations: the shared frontiers (storage/postgres, storage/redis, a
// user's own) that let several crawler processes work on one crawl. An
// implementation proves itself by passing Run in its tests:
//
//	func TestQueueConformance(t *testing.T) {
//		queuetest.Run(t, func(t *testing.T, dir string, cfg queuetest.Config) crawlkit.Queue {
//			q, err := myqueue.Open(dir, myqueue.Options{ // or a schema or key prefix named after dir
//				Now: cfg.Now, Politeness: cfg.Politeness, LeaseTTL: cfg.LeaseTTL,
//				MaxAttempts: cfg.MaxAttempts, RetryBase: cfg.RetryBase, RetryMax: cfg.RetryMax,
//				Schedule: cfg.Schedule,
//			})
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { q.Close() })
//			return q
//		})
//	}
//
// The Opener opens a handle on the crawl kept under dir, standing for one
// crawler process. The kit calls it with a fresh dir for every scenario, and
// again with the same dir and Config for every further handle, to check
// that handles on one dir share the crawl; crawls under different dirs must
// be independent. A queue that does not live in a directory uses dir only as
// a name (a schema, a key prefix); one that lives in one process may return
// the same queue for the same dir. Queues must read the time from cfg.Now
// (in Add, Next and Done) and schedule hosts by cfg.Politeness; the kit
// moves the clock itself, so it never sleeps.
//
// What it checks, for every handle and across handles:
//
//   - Add drops URLs the crawl already holds or has finished, within one call
//     and across handles, and rejects invalid entries (frontier.ErrInvalidEntry)
//     without queueing any entry of the call.
//   - A lease carries its entry's URL, host, depth, priority and meta, and an
//     expiry LeaseTTL after the lease; a host's URLs come in band order
//     (frontier.BFS: by depth), first in, first out within a band.
//   - A host holds at most one lease at a time, and is not leased again before
//     the politeness time of its last settlement, a BlockHost time (blocks
//     only extend) or an entry's NotBefore; NextAt reports when to ask again.
//   - Outcomes: a retry waits for max(RetryAfter, the exponential backoff) and
//     counts its attempt, up to MaxAttempts, then the URL is dropped; a
//     success with RecrawlAt, or one the Schedule recrawls, comes back then
//     with its fingerprint and its attempts reset; failures and plain
//     successes never come back. Done reports each of these as the
//     frontier.Settlement it applied: its kind, its due time and the
//     attempts counted.
//   - A lease not settled within LeaseTTL is leased again and its late Done
//     fails with frontier.ErrLeaseExpired; a second Done fails with
//     frontier.ErrLeaseSettled; a nil lease with frontier.ErrForeignLease;
//     an unknown outcome with frontier.ErrInvalidOutcome.
//   - On a queue that implements Extender, an extended lease keeps its URL
//     and its host from every handle until the new expiry and then settles
//     normally; extending a settled lease fails with frontier.ErrLeaseSettled,
//     an expired one with frontier.ErrLeaseExpired, a nil one with
//     frontier.ErrForeignLease.
//   - NextAt returns the zero time only when nothing is queued and nothing is
//     leased by any handle.
//   - Next returns a ready lease and gives up when its context ends.
//   - Concurrent Adds, leases and settles from several handles settle every
//     URL exactly once with no host leased twice at once.
package queuetest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/frontier"
)

// Config is the configuration the kit asks of a queue. Queues must honour
// every field.
type Config struct {
	// Now is the kit's clock, read by Add, Next and Done.
	Now func() time.Time
	// Politeness is the per-host model the queue schedules by.
	Politeness frontier.Politeness
	// LeaseTTL is how long a lease lasts.
	LeaseTTL time.Duration
	// MaxAttempts is how many fetches of a URL may end in OutcomeRetry
	// before it is dropped.
	MaxAttempts int
	// RetryBase and RetryMax bound the exponential retry backoff:
	// attempt n waits RetryBase*2^(n-1), at most RetryMax.
	RetryBase, RetryMax time.Duration
	// Schedule decides recrawls of successful URLs. It is nil except in
	// the scenario that checks a recrawl schedule.
	Schedule frontier.Schedule
}

// Extender is crawlkit.Extender: queues whose leases can be prolonged, such
// as *frontier.Frontier and the storage/postgres and storage/redis queues.
// The Crawler extends the lease of a URL it is still working on so that the
// URL is not leased to a second worker. Extend reads the time from
// Config.Now. Run checks it on queues that implement it.
type Extender = crawlkit.Extender

// Opener opens a handle on the crawl kept under dir, configured by cfg: one
// crawler process's view of the shared queue (see the package
// documentation). It reports failures and cleans up through t.
type Opener func(t *testing.T, dir string, cfg Config) crawlkit.Queue

// InProcess is the Opener of a queue that lives in one process, where every
// handle on a crawl is the same queue: it calls newQueue for the first
// handle on a dir and returns that queue for every later one.
func InProcess(newQueue func(t *testing.T, cfg Config) crawlkit.Queue) Opener {
	var mu sync.Mutex
	queues := map[string]crawlkit.Queue{}
	return func(t *testing.T, dir string, cfg Config) crawlkit.Queue {
		mu.Lock()
		defer mu.Unlock()
		if q, ok := queues[dir]; ok {
			return q
		}
		q := newQueue(t, cfg)
		queues[dir] = q
		return q
	}
}

// The configuration the scenarios use.
const (
	leaseTTL    = time.Minute
	maxAttempts = 3
	retryBase   = 10 * time.Second
	retryMax    = time.Minute
)

// base is the scenarios' starting time, on whole seconds so that stores
// with microsecond or millisecond clocks represent every time exactly.
var base = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// clock is the fake clock given to queues.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// env is one scenario's queue state and clock.
type env struct {
	t     *testing.T
	clock *clock
	open  Opener
	dir   string
	cfg   Config
}

func setup(t *testing.T, open Opener, delay time.Duration) *env {
	t.Helper()
	return setupSchedule(t, open, delay, nil)
}

// setupSchedule is setup with a recrawl Schedule.
func setupSchedule(t *testing.T, open Opener, delay time.Duration, sched frontier.Schedule) *env {
	t.Helper()
	c := &clock{t: base}
	return &env{t: t, clock: c, open: open, dir: t.TempDir(), cfg: Config{
		Now:         c.Now,
		Politeness:  frontier.FixedDelay(delay),
		LeaseTTL:    leaseTTL,
		MaxAttempts: maxAttempts,
		RetryBase:   retryBase,
		RetryMax:    retryMax,
		Schedule:    sched,
	}}
}

func (e *env) handle() crawlkit.Queue {
	e.t.Helper()
	q := e.open(e.t, e.dir, e.cfg)
	if q == nil {
		e.t.Fatal("Opener returned a nil Queue")
	}
	return q
}

// Run runs every conformance scenario against queues open opens, each
// as a subtest.
func Run(t *testing.T, open Opener) {
	t.Helper()
	scenarios := []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"AddDedup", testAddDedup},
		{"InvalidEntries", testInvalidEntries},
		{"LeaseFields", testLeaseFields},
		{"HostOrder", testHostOrder},
		{"Politeness", testPoliteness},
		{"NotBefore", testNotBefore},
		{"BlockHost", testBlockHost},
		{"Retry", testRetry},
		{"RetryAfter", testRetryAfter},
		{"Recrawl", testRecrawl},
		{"RecrawlSchedule", testRecrawlSchedule},
		{"FailedAndDone", testFailedAndDone},
		{"LeaseExpiry", testLeaseExpiry},
		{"Extend", testExtend},
		{"SettleErrors", testSettleErrors},
		{"DrainedAcrossHandles", testDrained},
		{"NextBlocks", testNextBlocks},
		{"Concurrent", testConcurrent},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) { s.fn(t, open) })
	}
}

func entry(host string, path string, depth int) frontier.Entry {
	return frontier.Entry{URL: "http://" + host + path, Host: host, Depth: depth}
}

func add(t *testing.T, q crawlkit.Queue, es ...frontier.Entry) {
	t.Helper()
	if err := q.Add(es...); err != nil {
		t.Fatalf("Add: %v", err)
	}
}

// lease asks q for a lease at now and fails the test if there is none.
func lease(t *testing.T, q crawlkit.Queue, now time.Time) *frontier.Lease {
	t.Helper()
	l, at, err := q.NextAt(now)
	if err != nil {
		t.Fatalf("NextAt(%v): %v", now.Sub(base), err)
	}
	if l == nil {
		t.Fatalf("NextAt(base+%v): no lease (next at base+%v), want one", now.Sub(base), at.Sub(base))
	}
	return l
}

// none checks that q has no lease at now and returns the reported time.
func none(t *testing.T, q crawlkit.Queue, now time.Time) time.Time {
	t.Helper()
	l, at, err := q.NextAt(now)
	if err != nil {
		t.Fatalf("NextAt(base+%v): %v", now.Sub(base), err)
	}
	if l != nil {
		t.Fatalf("NextAt(base+%v) leased %s, want nothing", now.Sub(base), l.URL)
	}
	return at
}

// drained checks that q reports nothing queued and nothing leased.
func drained(t *testing.T, q crawlkit.Queue, now time.Time) {
	t.Helper()
	if at := none(t, q, now); !at.IsZero() {
		t.Fatalf("NextAt(base+%v) reports base+%v, want the zero time (nothing queued or leased)", now.Sub(base), at.Sub(base))
	}
}

// done settles l with o at now and checks that Done reports want.
func done(t *testing.T, e *env, q crawlkit.Queue, now time.Time, l *frontier.Lease, o frontier.Outcome, want frontier.Settlement) {
	t.Helper()
	e.clock.Set(now)
	got, err := q.Done(l, o)
	if err != nil {
		t.Fatalf("Done(%s, %v): %v", l.URL, o.Kind, err)
	}
	if got.Kind != want.Kind || !got.At.Equal(want.At) || got.Attempt != want.Attempt {
		t.Fatalf("Done(%s, %v) at base+%v reports %v due %s attempt %d, want %v due %s attempt %d",
			l.URL, o.Kind, now.Sub(base), got.Kind, sinceBase(got.At), got.Attempt, want.Kind, sinceBase(want.At), want.Attempt)
	}
}

// finished is the Settlement of a success that is not recrawled.
func finished(l *frontier.Lease) frontier.Settlement {
	return frontier.Settlement{Kind: frontier.SettlementFinished, Attempt: l.Attempt}
}

// sinceBase formats a due time for failures: "base+1m0s", or "never".
func sinceBase(at time.Time) string {
	if at.IsZero() {
		return "never"
	}
	return "base+" + at.Sub(base).String()
}

// leaseAll leases and settles with success everything ready at now, one
// handle, and returns the URLs in lease order.
func leaseAll(t *testing.T, e *env, q crawlkit.Queue, now time.Time) []string {
	t.Helper()
	var urls []string
	for {
		l, _, err := q.NextAt(now)
		if err != nil {
			t.Fatalf("NextAt: %v", err)
		}
		if l == nil {
			return urls
		}
		urls = append(urls, l.URL)
		done(t, e, q, now, l, frontier.Success(0), finished(l))
	}
}

// testAddDedup: a URL is queued once, whatever adds it again, and never
// again once finished.
func testAddDedup(t *testing.T, open Opener) {
	e := setup(t, open, 0)
	q1, q2 := e.handle(), e.handle()
	a, b := entry("a.test", "/x", 0), entry("b.test", "/y", 0)
	add(t, q1, a, b, a)
	add(t, q2, a)
	add(t, q1, b)
	got := leaseAll(t, e, q1, base)
	sort.Strings(got)
	if want := []string{a.URL, b.URL}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("leased %v, want each of %v once", got, want)
	}
	add(t, q2, a, b)
	drained(t, q2, base)
	drained(t, q1, base)
}

// testInvalidEntries: a bad entry is rejected with ErrInvalidEntry and takes
// the call's good entries with it.
func testInvalidEntries(t *testing.T, open Opener) {
	e := setup(t, open, 0)
	q := e.handle()
	good := entry("a.test", "/ok", 0)
	for _, bad := range []frontier.Entry{{}, {URL: "http://a.test/meta", Host: "a.test", Meta: make([]byte, 64<<10+1)}} {
		if err := q.Add(good, bad); !errors.Is(err, frontier.ErrInvalidEntry) {
			t.Fatalf("Add with an invalid entry: %v, want ErrInvalidEntry", err)
		}
	}
	drained(t, q, base)
	add(t, q, good)
	if l := lease(t, q, base); l.URL != good.URL {
		t.Fatalf("leased %s, want %s", l.URL, good.URL)
	}
}

// testLeaseFields: a lease carries its entry.
func testLeaseFields(t *testing.T, open Opener) {
	e := setup(t, open, 0)
	q := e.handle()
	en := frontier.Entry{URL: "http://a.test:8080/p?q=1", Host: "a.test:8080", Depth: 3, Priority: 0.25, Meta: []byte{0, 1, 0xff}}
	add(t, q, en)
	l := lease(t, q, base)
	if l.URL != en.URL || l.Host != en.Host || l.Depth != en.Depth || l.Priority != en.Priority || string(l.Meta) != string(en.Meta) {
		t.Fatalf("lease %+v does not carry entry %+v", l, en)
	}
	if l.Attempt != 0 || l.Fingerprint != 0 || l.Interval != 0 {
		t.Fatalf("first lease has Attempt %d, Fingerprint %x, Interval %v; want zeros", l.Attempt, l.Fingerprint, l.Interval)
	}
	if d := l.Expires.Sub(base.Add(leaseTTL)); d < -time.Millisecond || d > time.Millisecond {
		t.Fatalf("lease expires at base+%v, want base+%v", l.Expires.Sub(base), leaseTTL)
	}
	if n := q.Stats().Leased; n != 1 {
		t.Fatalf("Stats().Leased = %d with one lease out, want 1", n)
	}
	done(t, e, q, base, l, frontier.Success(0), finished(l))
	if n := q.Stats().Leased; n != 0 {
		t.Fatalf("Stats().Leased = %d after the lease settled, want 0", n)
	}
}

// testHostOrder: a host's URLs come by band (depth under BFS), first in,
// first out within one band.
func testHostOrder(t *testing.T, open Opener) {
	e := setup(t, open, 0)
	q := e.handle()
	add(t, q, entry("a.test", "/d2", 2), entry("a.test", "/d0a", 0), entry("a.test", "/d1a", 1))
	add(t, q, entry("a.test", "/d0b", 0), entry("a.test", "/d1b", 1), entry("a.test", "/d0c", 0))
	got := leaseAll(t, e, q, base)
	want := []string{"/d0a", "/d0b", "/d0c", "/d1a", "/d1b", "/d2"}
	for i := range want {
		want[i] = "http://a.test" + want[i]
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("lease order %v, want %v", got, want)
	}
}

// testPoliteness: one lease per host at a time, and the host waits for its
// politeness time after a settle, while other hosts are served.
func testPoliteness(t *testing.T, open Opener) {
	const delay = 10 * time.Second
	e := setup(t, open, delay)
	q1, q2 := e.handle(), e.handle()
	add(t, q1, entry("a.test", "/1", 0), entry("a.test", "/2", 0), entry("b.test", "/1", 0))
	first := lease(t, q1, base)
	second := lease(t, q2, base)
	if first.Host == second.Host {
		t.Fatalf("host %s leased twice at once (%s, %s)", first.Host, first.URL, second.URL)
	}
	if at := none(t, q1, base); at.IsZero() || !at.After(base) {
		t.Fatalf("with leases out and a URL queued, NextAt reports base+%v, want a later time", at.Sub(base))
	}
	la := first
	if la.Host != "a.test" {
		la = second
	}
	t1 := base.Add(2 * time.Second)
	done(t, e, q1, t1, la, frontier.Success(0), finished(la))
	at := none(t, q2, t1)
	if at.IsZero() || !at.After(t1) || at.After(t1.Add(delay)) {
		t.Fatalf("after settling a.test at base+2s with a %v delay, NextAt reports base+%v, want in (base+2s, base+12s]", delay, at.Sub(base))
	}
	none(t, q2, t1.Add(delay-time.Millisecond))
	if l := lease(t, q2, t1.Add(delay)); l.URL != "http://a.test/2" {
		t.Fatalf("leased %s at the end of the delay, want http://a.test/2", l.URL)
	}
}

// testNotBefore: an entry waits for its NotBefore.
func testNotBefore(t *testing.T, open Opener) {
	e := setup(t, open, 0)
	q := e.handle()
	nb := base.Add(5 * time.Minute)
	en := entry("a.test", "/later", 0)
	en.NotBefore = nb
	add(t, q, en)
	if at := none(t, q, base); at.IsZero() || at.After(nb) {
		t.Fatalf("NextAt reports base+%v for an entry due at base+5m", at.Sub(base))
	}
	none(t, q, nb.Add(-time.Millisecond))
	if l := lease(t, q, nb); l.URL != en.URL {
		t.Fatalf("leased %s, want %s", l.URL, en.URL)
	}
}

// testBlockHost: blocks hold a host back for every handle, and only extend.
func testBlockHost(t *testing.T, open Opener) {
	e := setup(t, open, 0)
	q1, q2 := e.handle(), e.handle()
	add(t, q1, entry("a.test", "/1", 0))
	q1.BlockHost("a.test", base.Add(time.Minute))
	q1.BlockHost("a.test", base.Add(30*time.Second)) // earlier: ignored
	if at := none(t, q2, base); at.IsZero() || at.After(base.Add(time.Minute)) {
		t.Fatalf("NextAt of a blocked host reports base+%v, want at most base+1m", at.Sub(base))
	}
	none(t, q2, base.Add(45*time.Second))
	lease(t, q2, base.Add(time.Minute))
}

// testRetry: retries back off exponentially, count attempts and stop at
// MaxAttempts.
func testRetry(t *testing.T, open Opener) {
	e := setup(t, open, 0)
	q := e.handle()
	add(t, q, entry("a.test", "/flaky", 0))
	now := base
	for attempt := 0; attempt < maxAttempts; attempt++ {
		l := lease(t, q, now)
		if l.Attempt != attempt {
			t.Fatalf("lease %d has Attempt %d", attempt, l.Attempt)
		}
		backoff := retryBase << attempt
		want := frontier.Settlement{Kind: frontier.SettlementRetrying, At: now.Add(backoff), Attempt: attempt + 1}
		if attempt == maxAttempts-1 {
			want = frontier.Settlement{Kind: frontier.SettlementGivenUp, Attempt: maxAttempts}
		}
		done(t, e, q, now, l, frontier.Retry(0), want)
		if attempt == maxAttempts-1 {
			break
		}
		if at := none(t, q, now); at.IsZero() || at.After(now.Add(backoff)) {
			t.Fatalf("after retry %d NextAt reports base+%v, want at most base+%v", attempt+1, at.Sub(base), now.Add(backoff).Sub(base))
		}
		none(t, q, now.Add(backoff-time.Millisecond))
		now = now.Add(backoff)
	}
	drained(t, q, now.Add(time.Hour))
	if s := q.Stats(); s.Dropped != 1 || s.Retried != maxAttempts-1 {
		t.Fatalf("Stats: Retried %d, Dropped %d; want %d and 1", s.Retried, s.Dropped, maxAttempts-1)
	}
}

// testRetryAfter: a Retry-After longer than the backoff is honoured.
func testRetryAfter(t *testing.T, open Opener) {
	e := setup(t, open, 0)
	q := e.handle()
	add(t, q, entry("a.test", "/busy", 0))
	done(t, e, q, base, lease(t, q, base), frontier.Retry(5*time.Minute),
		frontier.Settlement{Kind: frontier.SettlementRetrying, At: base.Add(5 * time.Minute), Attempt: 1})
	none(t, q, base.Add(5*time.Minute-time.Millisecond))
	if l := lease(t, q, base.Add(5*time.Minute)); l.Attempt != 1 {
		t.Fatalf("retried lease has Attempt %d, want 1", l.Attempt)
	}
}

// testRecrawl: a success with RecrawlAt comes back then, with its
// fingerprint.
func testRecrawl(t *testing.T, open Opener) {
	e := setup(t, open, 0)
	q := e.handle()
	add(t, q, entry("a.test", "/news", 0))
	at := base.Add(time.Hour)
	o := frontier.Success(0xfeedface)
	o.RecrawlAt = at
	done(t, e, q, base, lease(t, q, base), o, frontier.Settlement{Kind: frontier.SettlementRecrawl, At: at})
	if next := none(t, q, base); next.IsZero() || next.After(at) {
		t.Fatalf("NextAt reports base+%v for a recrawl at base+1h", next.Sub(base))
	}
	none(t, q, at.Add(-time.Millisecond))
	l := lease(t, q, at)
	if l.Fingerprint != 0xfeedface || l.Attempt != 0 {
		t.Fatalf("recrawl lease has Fingerprint %x, Attempt %d; want feedface, 0", l.Fingerprint, l.Attempt)
	}
	done(t, e, q, at, l, frontier.Success(0xfeedface), finished(l))
	drained(t, q, at.Add(24*time.Hour))
}

// testRecrawlSchedule: the Schedule recrawls a success, and a recrawl
// starts its attempts afresh.
func testRecrawlSchedule(t *testing.T, open Opener) {
	const every = 2 * time.Hour
	e := setupSchedule(t, open, 0, frontier.FixedInterval(every))
	q := e.handle()
	add(t, q, entry("a.test", "/feed", 0))
	recrawl := func(now time.Time) frontier.Settlement {
		return frontier.Settlement{Kind: frontier.SettlementRecrawl, At: now.Add(every)}
	}
	done(t, e, q, base, lease(t, q, base), frontier.Success(7), recrawl(base))
	now := base.Add(every)
	none(t, q, now.Add(-time.Millisecond))
	l := lease(t, q, now)
	if l.Fingerprint != 7 || l.Interval != every {
		t.Fatalf("recrawl lease has Fingerprint %d, Interval %v; want 7, %v", l.Fingerprint, l.Interval, every)
	}
	done(t, e, q, now, l, frontier.Retry(0), frontier.Settlement{Kind: frontier.SettlementRetrying, At: now.Add(retryBase), Attempt: 1})
	now = now.Add(retryBase)
	if l = lease(t, q, now); l.Attempt != 1 {
		t.Fatalf("retried recrawl lease has Attempt %d, want 1", l.Attempt)
	}
	done(t, e, q, now, l, frontier.NotModified(), recrawl(now))
	if l = lease(t, q, now.Add(every)); l.Attempt != 0 {
		t.Fatalf("next recrawl lease has Attempt %d, want 0", l.Attempt)
	}
}

// testFailedAndDone: failed and successful URLs do not come back, even when
// added again.
func testFailedAndDone(t *testing.T, open Opener) {
	e := setup(t, open, 0)
	q := e.handle()
	ok, bad := entry("a.test", "/ok", 0), entry("b.test", "/gone", 0)
	add(t, q, ok, bad)
	for range 2 {
		l := lease(t, q, base)
		o, want := frontier.Success(1), finished(l)
		if l.URL == bad.URL {
			o, want = frontier.Failed(), frontier.Settlement{Kind: frontier.SettlementFailed}
		}
		done(t, e, q, base, l, o, want)
	}
	add(t, q, ok, bad)
	drained(t, q, base.Add(24*time.Hour))
}

// testLeaseExpiry: an unsettled lease comes back after LeaseTTL (a crashed
// worker), and the late Done fails.
func testLeaseExpiry(t *testing.T, open Opener) {
	const delay = time.Second
	e := setup(t, open, delay)
	q1, q2 := e.handle(), e.handle()
	add(t, q1, entry("a.test", "/1", 0))
	old := lease(t, q1, base)
	at := none(t, q2, base.Add(leaseTTL-time.Millisecond))
	if at.IsZero() {
		t.Fatal("NextAt reports the zero time while a lease is out")
	}
	// Expired: leased again once the host's politeness delay after the
	// expiry has passed.
	again := lease(t, q2, base.Add(leaseTTL+delay+time.Millisecond))
	if again.URL != old.URL || again.ID == old.ID || again.Attempt != old.Attempt {
		t.Fatalf("after expiry leased %s (ID %d, Attempt %d), want %s with a new ID and Attempt %d",
			again.URL, again.ID, again.Attempt, old.URL, old.Attempt)
	}
	e.clock.Set(base.Add(leaseTTL + 2*delay))
	if _, err := q1.Done(old, frontier.Success(0)); !errors.Is(err, frontier.ErrLeaseExpired) {
		t.Fatalf("late Done: %v, want ErrLeaseExpired", err)
	}
	done(t, e, q2, base.Add(leaseTTL+2*delay), again, frontier.Success(0), finished(again))
	drained(t, q1, base.Add(leaseTTL+time.Hour))
}

// testExtend: an extended lease outlives LeaseTTL on every handle and
// settles normally; settled, expired and nil leases cannot be extended.
func testExtend(t *testing.T, open Opener) {
	const delay = time.Second
	e := setup(t, open, delay)
	q1, q2 := e.handle(), e.handle()
	x, ok := q1.(Extender)
	if !ok {
		t.Skipf("%T does not implement queuetest.Extender", q1)
	}
	add(t, q1, entry("a.test", "/1", 0), entry("a.test", "/2", 0))
	l := lease(t, q1, base)
	at := base.Add(leaseTTL - 10*time.Second)
	e.clock.Set(at)
	if err := x.Extend(l, 10*time.Minute); err != nil {
		t.Fatalf("Extend before expiry: %v", err)
	}
	if want := at.Add(10 * time.Minute); !l.Expires.Equal(want) {
		t.Fatalf("Expires after Extend: base+%v, want base+%v", l.Expires.Sub(base), want.Sub(base))
	}
	// Past the original expiry, neither the URL nor its host is leased.
	later := base.Add(leaseTTL + delay + time.Second)
	none(t, q1, later)
	none(t, q2, later)
	done(t, e, q1, base.Add(5*time.Minute), l, frontier.Success(0), finished(l))
	if err := x.Extend(l, time.Minute); !errors.Is(err, frontier.ErrLeaseSettled) {
		t.Fatalf("Extend of a settled lease: %v, want ErrLeaseSettled", err)
	}
	// A lease that ran out cannot be extended.
	l2 := lease(t, q2, base.Add(5*time.Minute+delay))
	e.clock.Set(l2.Expires.Add(time.Second))
	if err := x.Extend(l2, time.Minute); !errors.Is(err, frontier.ErrLeaseExpired) {
		t.Fatalf("Extend of an expired lease: %v, want ErrLeaseExpired", err)
	}
	if err := x.Extend(nil, time.Minute); !errors.Is(err, frontier.ErrForeignLease) {
		t.Fatalf("Extend(nil): %v, want ErrForeignLease", err)
	}
}

// testSettleErrors: Done rejects nil leases, unknown outcomes (leaving the
// lease usable) and second settles.
func testSettleErrors(t *testing.T, open Opener) {
	e := setup(t, open, 0)
	q := e.handle()
	add(t, q, entry("a.test", "/1", 0))
	if _, err := q.Done(nil, frontier.Success(0)); !errors.Is(err, frontier.ErrForeignLease) {
		t.Fatalf("Done(nil): %v, want ErrForeignLease", err)
	}
	l := lease(t, q, base)
	if _, err := q.Done(l, frontier.Outcome{Kind: 200}); !errors.Is(err, frontier.ErrInvalidOutcome) {
		t.Fatalf("Done with an unknown outcome: %v, want ErrInvalidOutcome", err)
	}
	done(t, e, q, base, l, frontier.Success(0), finished(l))
	if _, err := q.Done(l, frontier.Success(0)); !errors.Is(err, frontier.ErrLeaseSettled) {
		t.Fatalf("second Done: %v, want ErrLeaseSettled", err)
	}
}

// testDrained: one handle's lease keeps every handle from seeing the end.
func testDrained(t *testing.T, open Opener) {
	e := setup(t, open, 0)
	q1, q2 := e.handle(), e.handle()
	drained(t, q2, base)
	add(t, q1, entry("a.test", "/only", 0))
	l := lease(t, q1, base)
	if at := none(t, q2, base); at.IsZero() {
		t.Fatal("NextAt on another handle reports the zero time while a lease is out")
	}
	done(t, e, q1, base, l, frontier.Success(0), finished(l))
	drained(t, q2, base)
}

// testNextBlocks: Next returns a ready lease at once, and returns the
// context's error when nothing becomes ready.
func testNextBlocks(t *testing.T, open Opener) {
	e := setup(t, open, 0)
	q := e.handle()
	add(t, q, entry("a.test", "/1", 0))
	l, err := q.Next(context.Background())
	if err != nil || l == nil || l.URL != "http://a.test/1" {
		t.Fatalf("Next: %v, %v; want the queued URL", l, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if l, err := q.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next with nothing ready: %v, %v; want context.DeadlineExceeded", l, err)
	}
}

// testConcurrent: handles adding overlapping URLs and leasing at once settle
// every URL exactly once, never two leases on one host at a time.
func testConcurrent(t *testing.T, open Opener) {
	e := setup(t, open, 0)
	const hosts, perHost, handles, workers = 8, 12, 3, 6
	var all []frontier.Entry
	for h := 0; h < hosts; h++ {
		for p := 0; p < perHost; p++ {
			all = append(all, entry(fmt.Sprintf("h%d.test", h), fmt.Sprintf("/p%d", p), p%3))
		}
	}
	qs := make([]crawlkit.Queue, handles)
	for i := range qs {
		qs[i] = e.handle()
	}
	var (
		mu       sync.Mutex
		active   = map[string]int{}
		settled  = map[string]int{}
		problems []string
	)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			q := qs[w%handles]
			// Every worker adds every URL, in its own order.
			for i := range all {
				en := all[(i*7+w*13)%len(all)]
				if err := q.Add(en); err != nil {
					mu.Lock()
					problems = append(problems, "Add: "+err.Error())
					mu.Unlock()
					return
				}
			}
			for {
				l, at, err := q.NextAt(base)
				if err != nil {
					mu.Lock()
					problems = append(problems, "NextAt: "+err.Error())
					mu.Unlock()
					return
				}
				if l == nil {
					if at.IsZero() {
						return
					}
					continue
				}
				mu.Lock()
				active[l.Host]++
				if active[l.Host] > 1 {
					problems = append(problems, "host "+l.Host+" leased twice at once")
				}
				mu.Unlock()
				// Hold the lease a moment, as a fetch would, so that
				// a second lease on the host in that time is seen;
				// the host is let go before Done frees it.
				time.Sleep(50 * time.Microsecond)
				mu.Lock()
				active[l.Host]--
				mu.Unlock()
				st, err := q.Done(l, frontier.Success(0))
				if err == nil && st.Kind != frontier.SettlementFinished {
					err = fmt.Errorf("%s settled as %v, want finished", l.URL, st.Kind)
				}
				if err != nil {
					mu.Lock()
					problems = append(problems, "Done: "+err.Error())
					mu.Unlock()
					return
				}
				mu.Lock()
				settled[l.URL]++
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	for _, p := range problems[:min(len(problems), 5)] {
		t.Error(p)
	}
	if len(settled) != len(all) {
		t.Errorf("%d URLs settled, want %d", len(settled), len(all))
	}
	for u, n := range settled {
		if n != 1 {
			t.Errorf("%s settled %d times", u, n)
		}
	}
	drained(t, qs[0], base)
}
