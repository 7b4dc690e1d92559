package frontier

import (
	"fmt"
	"time"
)

// The lease lifecycle: handing out, extending, releasing and expiring leases.

type leaseState uint8

const (
	leaseActive leaseState = iota
	leaseSettling
	leaseSettled
	leaseExpired
)

// Lease is a URL handed to one worker until it is settled with Done or it
// expires. Its exported fields are read-only.
type Lease struct {
	// ID identifies the lease within its Frontier.
	ID uint64
	// URL, Host, Depth, Priority and Meta are the entry's.
	URL      string
	Host     string
	Depth    int
	Priority float64
	Meta     []byte
	// Attempt counts earlier attempts that ended in OutcomeRetry.
	Attempt int
	// Fingerprint and Interval are the content fingerprint and recrawl
	// interval recorded by the previous successful fetch; zero on a
	// first fetch.
	Fingerprint uint64
	Interval    time.Duration
	// Expires is when the lease runs out unless extended; Extend updates
	// it.
	Expires time.Time

	f        *Frontier
	h        *host
	it       item
	deadline int64
	heapIdx  int
	state    leaseState
}

// lease hands out it from h. f.mu held.
func (f *Frontier) lease(h *host, it item, now int64) *Lease {
	f.leaseID++
	l := &Lease{
		ID:       f.leaseID,
		URL:      it.url,
		Host:     h.name,
		Depth:    int(it.depth),
		Priority: float64(it.prio),
		Attempt:  int(it.attempts),
		f:        f,
		h:        h,
		it:       it,
		deadline: addNano(now, f.leaseTTL),
	}
	if it.ext != nil {
		if it.ext.meta != "" {
			l.Meta = []byte(it.ext.meta)
		}
		l.Fingerprint = it.ext.fp
		l.Interval = time.Duration(it.ext.interval)
	}
	l.Expires = time.Unix(0, l.deadline)
	f.leases.push(l)
	h.outstanding++
	f.stats.Leases++
	f.schedule(h, now)
	return l
}

// checkLease reports why l cannot be settled or extended at now, expiring
// it if its time ran out. f.mu held.
func (f *Frontier) checkLease(l *Lease, now int64) error {
	if f.closed {
		return ErrClosed
	}
	if l == nil || l.f != f {
		return ErrForeignLease
	}
	switch l.state {
	case leaseSettled, leaseSettling:
		return fmt.Errorf("%w: %s", ErrLeaseSettled, l.URL)
	case leaseExpired:
		return fmt.Errorf("%w: %s", ErrLeaseExpired, l.URL)
	}
	if now >= l.deadline {
		f.expireLease(l)
		return fmt.Errorf("%w: %s", ErrLeaseExpired, l.URL)
	}
	return nil
}

// Extend prolongs l to ttl from now (Config.Now).
func (f *Frontier) Extend(l *Lease, ttl time.Duration) error { return f.ExtendAt(f.now(), l, ttl) }

// ExtendAt prolongs l so that it expires at now+ttl. It returns
// ErrLeaseExpired if the lease ran out before now, and ErrLeaseSettled if it
// was settled.
func (f *Frontier) ExtendAt(now time.Time, l *Lease, ttl time.Duration) error {
	n := now.UnixNano()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.checkLease(l, n); err != nil {
		return err
	}
	l.deadline = addNano(n, max(ttl, 0))
	l.Expires = time.Unix(0, l.deadline)
	f.leases.fix(l)
	return nil
}

// Release gives l back unsettled at the current time. See ReleaseAt.
func (f *Frontier) Release(l *Lease) error { return f.ReleaseAt(f.now(), l) }

// ReleaseAt gives l back unsettled at time now, for a URL that was not
// fetched for a reason that is not its own (its host's robots.txt could not
// be read, say): its URL is queued again at the head of its band with its
// attempt count unchanged, as when a lease expires, and its host may be
// leased again from its politeness time after now (block the host first to
// hold it longer). It is counted in Stats.Released. It returns the errors
// DoneAt returns for a lease that cannot be settled; afterwards, Done,
// Extend and Release of l return ErrLeaseExpired, as for an expired lease.
func (f *Frontier) ReleaseAt(now time.Time, l *Lease) error {
	n := now.UnixNano()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.checkLease(l, n); err != nil {
		return err
	}
	l.deadline = n
	l.Expires = now
	f.requeueLease(l)
	f.stats.Released++
	return nil
}

// expire returns the URLs of leases whose time ran out at now to their
// queues. f.mu held.
func (f *Frontier) expire(now int64) {
	for len(f.leases) > 0 && f.leases[0].deadline <= now {
		f.expireLease(f.leases[0])
	}
}

func (f *Frontier) expireLease(l *Lease) {
	f.requeueLease(l)
	f.stats.Expired++
}

// requeueLease ends l unsettled and queues its URL again at the head of its
// band, its attempt count unchanged; the host may be leased again from its
// politeness time after l's deadline. f.mu held.
func (f *Frontier) requeueLease(l *Lease) {
	f.leases.remove(l)
	l.state = leaseExpired
	h := l.h
	h.outstanding--
	h.band(int(l.it.band)).q.pushFront(l.it)
	h.queued++
	h.readyAt = max(h.readyAt, unixNano(f.polite.ReadyAt(h.name, time.Unix(0, l.deadline))))
	f.schedule(h, l.deadline)
	f.signal()
}
