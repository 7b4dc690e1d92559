package frontier

import (
	"context"
	"math"
	"time"
)

// The scheduler core: which host and URL come next, and when. nextLocked
// and what it calls run under f.mu and do no IO: a window of URLs to read
// from the store is handed back to next, which reads it with f.mu released
// (see windowRead in paging.go).

// waiter is a goroutine blocked in Next. Only the first waiter (the
// leader) sleeps with a timer for the frontier's next wake time; the others
// sleep until woken. A change that may make work available wakes the
// leader only, and a waiter that leaves the queue wakes the new leader, so
// a wake time or an Add wakes one goroutine, not every idle worker, and
// each lease hands the watch on to the next waiter.
type waiter struct {
	ch     chan struct{} // capacity 1: a pending wake-up
	queued bool
}

// wake wakes w without blocking; a wake-up already pending suffices.
func (w *waiter) wake() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// leave removes w (nil: none) from the waiters and, if it was the leader,
// wakes the new one. f.mu held.
func (f *Frontier) leave(w *waiter) {
	if w == nil || !w.queued {
		return
	}
	w.queued = false
	for i, x := range f.waiters {
		if x == w {
			f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
			if i == 0 && len(f.waiters) > 0 {
				f.waiters[0].wake()
			}
			return
		}
	}
}

// hostFor returns the host named name, creating it. f.mu held.
func (f *Frontier) hostFor(name string) *host {
	h := f.hosts[name]
	if h == nil {
		h = &host{name: name, heapIdx: -1, readyAt: math.MinInt64, blocked: math.MinInt64}
		f.hosts[name] = h
	}
	return h
}

// schedule files h where it belongs after any change: in a ready list if it
// may be leased at now, in the time heap if it must wait (or if it is idle
// but its politeness time has not passed), or nowhere. f.mu held.
func (f *Frontier) schedule(h *host, now int64) {
	if h.loading {
		// Its loader files it when its store read ends (nextLocked).
		h.readyTok = 0
		f.times.remove(h)
		return
	}
	work := h.hasWork()
	if !work || h.outstanding >= f.maxLeases {
		h.readyTok = 0
		if work || h.outstanding > 0 {
			f.times.remove(h)
			return
		}
		// Idle: keep the host (and its politeness time) until that time
		// passes, then forget it.
		if at := h.eligibleAt(); at > now {
			f.times.upsert(h, at)
			return
		}
		f.times.remove(h)
		delete(f.hosts, h.name)
		return
	}
	if at := h.eligibleAt(); at > now {
		h.readyTok = 0
		f.times.upsert(h, at)
		return
	}
	f.times.remove(h)
	b := min(h.bestBand(), f.bands-1)
	if h.readyTok != 0 && int(h.readyBand) == b {
		return
	}
	// Not ready yet, or ready in a worse band than the one its best URL
	// is in now (a better URL arrived while it waited): file it in its
	// best band's list; the old entry goes stale.
	f.tok++
	if f.tok == 0 {
		f.tok = 1
	}
	h.readyTok = f.tok
	h.readyBand = uint8(b)
	f.ready[b].pushBack(readyRef{h: h, tok: h.readyTok})
}

// signal wakes the leading goroutine blocked in Next, which wakes the next
// one when it leaves; Close wakes them all. f.mu held.
func (f *Frontier) signal() {
	if f.closed {
		for _, w := range f.waiters {
			w.wake()
		}
		return
	}
	if len(f.waiters) > 0 {
		f.waiters[0].wake()
	}
}

// Next returns a lease on the best URL of a host that may be contacted now,
// blocking until there is one or ctx is done. It reads the clock from
// Config.Now; waiting uses real timers.
func (f *Frontier) Next(ctx context.Context) (*Lease, error) {
	var w *waiter
	for {
		now := f.now()
		if w == nil {
			// Most calls find a ready host at once and never wait.
			l, _, err := f.next(ctx, now, nil)
			if l != nil || err != nil {
				return l, err
			}
			w = &waiter{ch: make(chan struct{}, 1)}
		}
		l, wake, err := f.next(ctx, now, w)
		if l != nil || err != nil {
			return l, err
		}
		var timer *time.Timer
		var tc <-chan time.Time
		if !wake.IsZero() {
			timer = time.NewTimer(wake.Sub(now))
			tc = timer.C
		}
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			f.mu.Lock()
			f.leave(w)
			f.mu.Unlock()
			return nil, ctx.Err()
		case <-w.ch:
		case <-tc:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// NextAt returns a lease on the best URL of a host that may be contacted at
// now, if there is one. Otherwise it returns a nil lease and the time at
// which one may become available (a host's politeness time, a delayed URL's
// due time or a lease's expiry), or the zero time if nothing will happen
// before the next Add or Done. It never waits for a lease; with a Store it
// may read a window of a host's URLs, which Close cancels.
func (f *Frontier) NextAt(now time.Time) (*Lease, time.Time, error) {
	return f.next(nil, now, nil)
}

// next leases the best ready URL at now. Without one it returns the next
// wake time, and with a waiter w it queues w (if it is not queued yet) and
// returns the wake time only if w leads the queue (the zero time
// otherwise: w sleeps until woken). A waiter that gets a lease, or an
// error, leaves the queue.
//
// The scheduling itself (nextLocked) is pure: no IO under f.mu. When the
// host it picked must first read a window of URLs from the store, it hands
// the read back as a windowRead; next runs it with f.mu released, under ctx
// (nil: the frontier's own context, which Close cancels), and nextLocked
// resumes with that host.
func (f *Frontier) next(ctx context.Context, now time.Time, w *waiter) (*Lease, time.Time, error) {
	n := now.UnixNano()
	var loaded *windowRead
	for {
		f.mu.Lock()
		l, wake, rd, err := f.nextLocked(n, w, loaded)
		loaded = nil
		if rd != nil {
			// Due URLs promote could not file wait in f.moving until
			// this call is through with its reads, as if it had made
			// them all with f.mu held.
			f.mu.Unlock()
			f.scan(ctx, rd)
			loaded = rd
			continue
		}
		op := f.refile(n)
		f.mu.Unlock()
		if op == nil {
			return l, wake, err
		}
		// Due URLs that did not fit in their hosts' windows are re-filed
		// now that f.mu is released: the write's apply takes it.
		merr := op.submit(f)
		if l != nil || err != nil {
			// A failed move is tried again by a later call: its URLs
			// are back among the delayed ones.
			return l, wake, err
		}
		if merr != nil {
			f.mu.Lock()
			f.leave(w)
			f.mu.Unlock()
			return nil, time.Time{}, merr
		}
		// The moved URLs may have made a host ready, and more due URLs
		// may wait for room: look again.
	}
}

// nextLocked is next with f.mu held. Due URLs that promote could not put
// into memory are left in f.moving for the caller to re-file. When the host
// popReady picked must read a band's window from the store first, it
// returns that read (a windowRead) instead of a lease, and the caller calls
// it again with the read done as loaded, to go on with the same host.
func (f *Frontier) nextLocked(n int64, w *waiter, loaded *windowRead) (*Lease, time.Time, *windowRead, error) {
	var resume *host
	read := true // promote may read the delayed window
	if loaded != nil {
		filed, err := f.endRead(loaded, n)
		if err != nil {
			f.leave(w)
			return nil, time.Time{}, nil, err
		}
		// After a band's read promote ran already; after a read of the
		// delayed window that filed nothing it stops at an empty heap,
		// or it would read the same URLs again.
		resume, read = loaded.h, loaded.h == nil && filed
	}
	if f.closed {
		f.leave(w)
		return nil, time.Time{}, nil, ErrClosed
	}
	f.expire(n)
	if rd := f.promote(n, read); rd != nil {
		f.leave(w)
		return nil, time.Time{}, rd, nil
	}
	if resume != nil && (resume.outstanding >= f.maxLeases || resume.eligibleAt() > n) {
		// Leases of the host may have settled or expired, or it may
		// have been blocked, while f.mu was released: it goes on only
		// if it may still be leased at n.
		f.schedule(resume, n)
		resume = nil
	}
	for {
		h, skip := resume, -1
		if h != nil {
			// The band just read is not read again by this take.
			resume, skip = nil, loaded.b
		} else if h = f.popReady(); h == nil {
			break
		}
		it, ok, ld := f.take(h, skip)
		if ld != nil {
			// The caller reads the window with f.mu released; the
			// host stays out of the ready lists meanwhile, and w
			// leaves the queue so that another waiter leads.
			f.leave(w)
			return nil, time.Time{}, ld, nil
		}
		if !ok {
			f.schedule(h, n)
			continue
		}
		l := f.lease(h, it, n)
		f.leave(w)
		if len(f.waiters) > 0 && f.anyReady() {
			// More work is ready now: hand it on.
			f.waiters[0].wake()
		}
		return l, time.Time{}, nil, nil
	}
	if w != nil {
		if !w.queued {
			w.queued = true
			f.waiters = append(f.waiters, w)
		}
		if f.waiters[0] != w {
			return nil, time.Time{}, nil, nil
		}
	}
	wake := f.wakeAt(n)
	if wake == math.MaxInt64 {
		return nil, time.Time{}, nil, nil
	}
	return nil, time.Unix(0, wake), nil, nil
}

// anyReady reports whether some host may be ready (its ready entry may be
// stale, which costs a waiter one wasted wake-up). f.mu held.
func (f *Frontier) anyReady() bool {
	for b := range f.ready {
		if f.ready[b].len() > 0 {
			return true
		}
	}
	return false
}

// popReady picks a band by smooth weighted round robin among the bands with
// ready hosts (nginx's algorithm: each band's credit grows by its weight,
// the richest band is picked and pays the total), and returns the band's
// longest-ready host. f.mu held.
func (f *Frontier) popReady() *host {
	total, best := 0, -1
	for b := range f.ready {
		r := &f.ready[b]
		for r.len() > 0 && r.front().tok != r.front().h.readyTok {
			r.popFront()
		}
		if r.len() == 0 {
			continue
		}
		f.wrr[b] += f.weights[b]
		total += f.weights[b]
		if best < 0 || f.wrr[b] > f.wrr[best] {
			best = b
		}
	}
	if best < 0 {
		return nil
	}
	f.wrr[best] -= total
	ref := f.ready[best].popFront()
	ref.h.readyTok = 0
	return ref.h
}

// take removes h's best URL from memory. When the best band with URLs is
// empty in memory but may have more in the store, it returns the read of
// its next window instead (see loadBand), unless the band is skip, whose
// window was just read: then it goes on to the next band. f.mu held.
func (f *Frontier) take(h *host, skip int) (item, bool, *windowRead) {
	for b := range h.bands {
		bq := &h.bands[b]
		if bq.q.len() == 0 && bq.more && b != skip {
			return item{}, false, f.loadBand(h, b)
		}
		if bq.q.len() > 0 {
			h.queued--
			return bq.q.popFront(), true, nil
		}
	}
	if h.unread > 0 { // the next band, not read since recovery
		b := len(h.bands)
		h.band(b)
		return item{}, false, f.loadBand(h, b)
	}
	return item{}, false, nil
}

// promote moves due delayed URLs into their hosts' queues and hosts whose
// time has come into the ready lists. With a Store, a due URL whose band
// already holds Window URLs in memory is not added to it: it is appended to
// f.moving, for the caller to re-file as a queued URL at the band's tail
// once f.mu is released (refile). At most DelayedWindow URLs are being moved
// at a time; when that many are, the remaining due URLs wait in the delayed
// heap for a later call, so memory and the time spent here stay bounded
// however many URLs are due. When the delayed heap is empty and the store
// may hold more delayed URLs, it returns the read of their next window
// (if read is set and no other call is reading it) for the caller to run
// with f.mu released. f.mu held.
func (f *Frontier) promote(now int64, read bool) *windowRead {
	for {
		if len(f.delayed) == 0 {
			if !f.dmore || !read || f.dloading {
				break
			}
			return f.loadDelayed()
		}
		if f.delayed[0].due > now {
			break
		}
		h := f.hosts[f.delayed[0].host]
		retry := f.delayed[0].it.attempts > 0
		if f.store != nil && h != nil && (h.bandFull(f.delayed[0].it.band, f.windowNow()) ||
			retry && h.bandMore(f.delayed[0].it.band)) {
			// The band's tail is in the store: a retry goes there, and
			// anything else when memory holds a full window already.
			if len(f.moving)+f.nmoving >= f.dwindow {
				break
			}
			f.moving = append(f.moving, f.popDelayed())
			continue
		}
		d := f.popDelayed()
		if h == nil {
			h = f.hostFor(d.host)
		}
		if f.store != nil {
			if d.it.ext == nil {
				d.it.ext = &itemExt{}
			}
			d.it.ext.delayed = true
			d.it.ext.due = d.due
		}
		// A retry goes to the tail of its band: it had its turn, and
		// at the head it would be fetched (and fail) again before URLs
		// that never failed. Other due URLs (recrawls, NotBefore) go to
		// the head: they have waited already.
		if retry {
			h.band(int(d.it.band)).q.pushBack(d.it)
		} else {
			h.band(int(d.it.band)).q.pushFront(d.it)
		}
		h.queued++
		f.schedule(h, now)
	}
	for len(f.times) > 0 && f.times[0].heapAt <= now {
		f.schedule(f.times[0], now)
	}
	return nil
}

// popDelayed removes the earliest delayed URL from the heap, remembering
// the highest key taken out of it (see trimDelayed). f.mu held.
func (f *Frontier) popDelayed() delayedItem {
	d := f.delayed.pop()
	if k := (dkey{d.due, d.it.seq}); f.dfloor.less(k) {
		f.dfloor = k
	}
	return d
}

// wakeAt is the earliest time after now something may become leasable
// without an Add or Done; math.MaxInt64 if none. f.mu held.
func (f *Frontier) wakeAt(now int64) int64 {
	w := int64(math.MaxInt64)
	if len(f.times) > 0 {
		w = min(w, f.times[0].heapAt)
	}
	if len(f.delayed) > 0 {
		w = min(w, f.delayed[0].due)
	}
	if len(f.leases) > 0 {
		w = min(w, f.leases[0].deadline)
	}
	if f.nmoving > 0 || f.reading > 0 {
		// Another call is re-filing URLs (and due URLs may wait for
		// room among them), or reading a window from the store: they
		// are in no queue until its write is applied or its read ends,
		// which wakes the leading waiter. Until then, report a time
		// soon after now, never "nothing queued" and never a time that
		// has passed already.
		soon := addNano(now, time.Millisecond)
		if w = min(w, soon); w <= now {
			w = soon
		}
	}
	return w
}
