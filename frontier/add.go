package frontier

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"
)

// Adding URLs: validation, and filing them into the in-memory windows.

// checkHost validates a host name for use in keys.
func checkHost(h string) error {
	if h == "" {
		return errors.New("empty host")
	}
	if len(h) > maxHostBytes {
		return fmt.Errorf("host of %d bytes", len(h))
	}
	for i := 0; i < len(h); i++ {
		if h[i] <= ' ' || h[i] == 0x7f {
			return fmt.Errorf("host %q contains a control or space byte", h)
		}
	}
	return nil
}

// hostOf derives a host from a URL when the entry names none: the URL's
// host and port, lower-cased. Callers should pass urlnorm.Host instead.
func hostOf(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if u.Host == "" {
		return "", errors.New("URL has no host")
	}
	return strings.ToLower(u.Host), nil
}

// prepared is a validated Entry.
type prepared struct {
	host string
	it   item
	due  int64 // > now: delayed
}

func (f *Frontier) prepare(now int64, entries []Entry, out []prepared) ([]prepared, error) {
	for i := range entries {
		p, err := f.prepareOne(now, &entries[i])
		if err != nil {
			return nil, fmt.Errorf("%w: entry %d: %v", ErrInvalidEntry, i, err)
		}
		out = append(out, p)
	}
	return out, nil
}

func (f *Frontier) prepareOne(now int64, e *Entry) (prepared, error) {
	if e.URL == "" {
		return prepared{}, errors.New("empty URL")
	}
	if len(e.URL) > maxURLBytes {
		return prepared{}, fmt.Errorf("URL of %d bytes exceeds %d", len(e.URL), maxURLBytes)
	}
	if len(e.Meta) > maxMetaBytes {
		return prepared{}, fmt.Errorf("metadata of %d bytes exceeds %d", len(e.Meta), maxMetaBytes)
	}
	h := e.Host
	if h == "" {
		var err error
		if h, err = hostOf(e.URL); err != nil {
			return prepared{}, fmt.Errorf("no host for %q: %v", e.URL, err)
		}
	}
	if err := checkHost(h); err != nil {
		return prepared{}, err
	}
	if e.Priority < 0 || math.IsNaN(e.Priority) || math.IsInf(e.Priority, 0) {
		return prepared{}, fmt.Errorf("priority %v is not a finite non-negative number", e.Priority)
	}
	var band int
	switch p := f.prio.(type) {
	case BFS:
		// Called on the concrete type so that entries do not escape to
		// the heap in the common case.
		band = p.Band(e, f.bands)
	default:
		ec := *e
		band = f.prio.Band(&ec, f.bands)
	}
	band = min(max(band, 0), f.bands-1)
	p := prepared{host: h, it: item{
		url:   e.URL,
		prio:  prio32(e.Priority),
		depth: uint16(min(max(e.Depth, 0), math.MaxUint16)),
		band:  uint8(band),
	}}
	if len(e.Meta) > 0 {
		p.it.ext = &itemExt{meta: string(e.Meta)}
	}
	if !e.NotBefore.IsZero() {
		if nb := unixNano(e.NotBefore); nb > now {
			p.due = nb
		}
	}
	return p, nil
}

// Add queues entries: all of them or, on error, none. With a Store they are
// durable when Add returns. Add reads the clock from Config.Now.
func (f *Frontier) Add(entries ...Entry) error { return f.AddAt(f.now(), entries...) }

// AddAt is Add at time now: entries whose NotBefore is after now wait for it.
func (f *Frontier) AddAt(now time.Time, entries ...Entry) error {
	if len(entries) == 0 {
		return nil
	}
	n := now.UnixNano()
	if f.store == nil {
		return f.addMemory(n, entries)
	}
	ps, err := f.prepare(n, entries, make([]prepared, 0, len(entries)))
	if err != nil {
		return err
	}
	f.mu.Lock()
	closed := f.closed
	f.mu.Unlock()
	if closed {
		return ErrClosed
	}
	op := &pendingOp{
		nseq: len(ps),
		write: func(seq uint64, m []Mutation) []Mutation {
			for i := range ps {
				p := &ps[i]
				p.it.seq = seq + uint64(i)
				r := p.it.record(p.host)
				if p.due != 0 {
					m = append(m, Mutation{Key: delayedKey(p.due, p.it.seq), Value: appendRecord(nil, &r, true)})
				} else {
					m = append(m, Mutation{Key: queuedKey(p.host, p.it.band, p.it.seq), Value: appendRecord(nil, &r, false)})
				}
			}
			return m
		},
		apply: func(uint64) {
			for i := range ps {
				f.insert(&ps[i], n)
			}
			f.stats.Added += uint64(len(ps))
		},
	}
	return f.commit.submit(op)
}

// addMemory adds entries to a frontier without a Store.
func (f *Frontier) addMemory(now int64, entries []Entry) error {
	var buf [8]prepared
	ps, err := f.prepare(now, entries, buf[:0])
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	for i := range ps {
		f.seq++
		ps[i].it.seq = f.seq
		f.insert(&ps[i], now)
	}
	f.stats.Added += uint64(len(ps))
	f.signal()
	return nil
}

// insert puts a newly added or written URL into memory. f.mu held.
func (f *Frontier) insert(p *prepared, now int64) {
	if p.due != 0 {
		f.insertDelayed(delayedItem{it: p.it, host: p.host, due: p.due})
		return
	}
	h := f.hostFor(p.host)
	bq := h.band(int(p.it.band))
	switch {
	case f.store == nil:
		bq.q.pushBack(p.it)
		h.queued++
	case p.it.seq <= bq.cursor:
		// A window load already read it from the store.
		return
	case bq.loading:
		// A window load is reading the band outside f.mu and may or
		// may not see this URL: the band keeps more set when it ends.
		bq.dirty = true
	case !bq.more && bq.q.len() < f.windowNow():
		bq.q.reserve(1)
		bq.q.pushBack(p.it)
		bq.cursor = p.it.seq
		h.queued++
	default:
		bq.more = true
	}
	f.schedule(h, now)
}

// insertDelayed puts a URL with a due time into memory or leaves it to the
// delayed window of the store. f.mu held.
func (f *Frontier) insertDelayed(d delayedItem) {
	if f.store == nil {
		f.delayed.push(d)
		return
	}
	k := dkey{d.due, d.it.seq}
	switch {
	case f.dloading && f.dcursor.less(k):
		// The delayed window is being read and may or may not return
		// it: it stays in the store, and the read is cut before it
		// (endDelayed).
		if !f.dcut || k.less(f.dlow) {
			f.dcut, f.dlow = true, k
		}
		f.dmore = true
	case !f.dcursor.less(k):
		// Below the window's end: a load skipped it as not yet applied,
		// or it is a new URL due before the last one in memory.
		f.pushDelayed(d)
	case !f.dmore && len(f.delayed) < f.dwindow:
		f.delayed.push(d)
		f.dcursor = k
	default:
		f.dmore = true
	}
}

// pushDelayed puts a delayed URL whose key is at most f.dcursor into the
// heap. With a Store, a heap grown past twice DelayedWindow is trimmed back
// to the earliest DelayedWindow URLs (trimDelayed), so that a stream of URLs
// due before the window's end (short retries while the window reaches far
// into the future) cannot grow it without bound. f.mu held.
func (f *Frontier) pushDelayed(d delayedItem) {
	f.delayed.push(d)
	if f.store != nil && len(f.delayed) > 2*f.dwindow {
		f.trimDelayed()
	}
}
