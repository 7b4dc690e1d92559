package frontier

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Paging between memory and the Store: recovery, reading host and delayed
// windows, trimming the delayed window and re-filing due URLs.

// recover rebuilds the host index from the store: the sequence high-water
// mark, and every host that has queued URLs. The URLs themselves stay in the
// store until their band's window is loaded.
//
// Hosts are found by scanning a few keys at a time and seeking past the
// last host a scan reached: a store of many small hosts is read in a scan
// per recoverScan keys, one of few large hosts in about one seek per host.
// After a scan that ended inside its first host, the next reads one key
// only, so a large host is not read recoverScan keys at a time.
func (f *Frontier) recover() error {
	ctx := context.Background()
	kvs, err := f.store.Scan(ctx, metaSeqKey, append(metaSeqKey[:len(metaSeqKey):len(metaSeqKey)], 0), 1)
	if err != nil {
		return fmt.Errorf("frontier: reading store: %w", err)
	}
	if len(kvs) == 1 {
		if len(kvs[0].Value) != 8 {
			return fmt.Errorf("%w: sequence record of %d bytes", ErrCorrupt, len(kvs[0].Value))
		}
		f.commit.seq = binary.BigEndian.Uint64(kvs[0].Value)
	}
	f.appliedSeq = f.commit.seq
	f.dmore = true
	start := []byte{kindQueued}
	end := []byte{kindQueued + 1}
	var h *host
	var prefix []byte // h's queued keys start with it
	limit := recoverScan
	for {
		kvs, err := f.store.Scan(ctx, start, end, limit)
		if err != nil {
			return fmt.Errorf("frontier: reading store: %w", err)
		}
		hosts, last := 0, 0
		for _, kv := range kvs {
			if h != nil && bytes.HasPrefix(kv.Key, prefix) {
				// A later key of the host. A malformed one is left to
				// the band's window read, which skips it.
				if _, band, _, err := parseQueuedKey(kv.Key); err == nil {
					last = max(last, int(band))
					if !h.bandMore(band) {
						// A band past the configured ones: the store
						// was written with more. Its URLs are kept,
						// after the others.
						h.band(int(band)).more = true
					}
				}
				continue
			}
			name, band, _, err := parseQueuedKey(kv.Key)
			if err != nil {
				return err
			}
			last = int(band)
			if checkHost(name) != nil {
				return fmt.Errorf("%w: queued key with invalid host %q", ErrCorrupt, name)
			}
			hosts++
			h = f.hostFor(name)
			prefix = hostPrefix(name)
			// Every configured band from the first one found may hold
			// URLs; those after it are allocated when they are needed.
			h.band(int(band)).more = true
			h.unread = uint8(max(f.bands-1-int(band), 0))
			f.schedule(h, math.MinInt64)
		}
		if len(kvs) < limit {
			return nil // the scan read every key left
		}
		// Seek past the configured bands (or the last band read) of the
		// last host: in the common case this lands on the next host's
		// first key.
		if nb := max(last+1, f.bands); nb <= math.MaxUint8 {
			start = append(slices.Clip(prefix), byte(nb))
		} else {
			start = append(slices.Clip(prefix[:len(prefix)-1]), 1)
		}
		// Past the last key read in any case, so that a malformed key
		// (whose band byte may sort after the seek) is not read again.
		if lastKey := kvs[len(kvs)-1].Key; bytes.Compare(start, lastKey) <= 0 {
			start = append(slices.Clip(lastKey), 0)
		}
		prev := limit
		limit = recoverScan
		if prev > 1 && hosts <= 1 {
			limit = 1
		}
	}
}

// recoverScan is how many keys a recovery scan reads at most.
const recoverScan = 16

// windowNow is the window of each band with the hosts now in memory (see
// Config.MaxInMemory). f.mu held.
func (f *Frontier) windowNow() int {
	return windowFor(f.window, f.maxMem, len(f.hosts))
}

// windowFor is the window of each band of hosts hosts: window, shrunk so
// that their windows fit in maxMem URLs. Zero (more hosts than maxMem)
// means a band holds no URL in memory until its host is leased, and then
// reads one (loadBand).
func windowFor(window, maxMem, hosts int) int {
	if hosts > 0 && maxMem/hosts < window {
		return maxMem / hosts
	}
	return window
}

// windowRead is the read of the next window of band b of host h, or (h
// nil) of the delayed URLs, from the store. It runs with f.mu released: a
// store read may be a network round trip (storage/postgres), and holding
// the scheduler's lock through it would stall every Add, Done and Stats of
// every host, with nothing able to cancel it.
//
// While a band's window is read, h.loading keeps the host out of the ready
// lists and the time heap (no other call leases it or reads its bands),
// and the band's loading flag makes insert leave URLs added meanwhile to
// the store, marking the band dirty: the read may or may not have seen
// them, so the band keeps more set. The band's cursor only moves when the
// read ends. URLs that return to the band meanwhile (an expired or
// released lease, a due recrawl) are in memory already and stay ahead of
// the window read.
//
// While the delayed window is read (f.dloading), promote takes only the
// URLs in memory, and a URL that becomes delayed meanwhile with a key after
// the window's end (f.dcursor) is left to the store. Unlike a band's, the
// delayed keys are ordered by due time, so it may sort among the keys
// being read, which the read may or may not return: the window read is cut
// before the lowest such key (f.dlow), and a later read starts there. So
// nothing is held in memory for URLs delayed during a read, and the
// delayed window stays bounded. If trimDelayed moved the window's end
// meanwhile, the read no longer continues it and is dropped (the store
// still holds its URLs).
type windowRead struct {
	h          *host
	b          int
	from       dkey // the delayed window's end when the read began
	start, end []byte
	limit      int
	kvs        []KV
	err        error
}

// loadBand marks band b of h as being read and returns the read for the
// caller to run (scan) with f.mu released. f.mu held, f not closed.
func (f *Frontier) loadBand(h *host, b int) *windowRead {
	bq := &h.bands[b]
	h.loading, bq.loading = true, true
	f.reading++
	f.loads.Add(1)
	return &windowRead{
		h:     h,
		b:     b,
		start: queuedKey(h.name, uint8(b), bq.cursor+1),
		end:   append(hostPrefix(h.name), uint8(b)+1),
		limit: max(f.windowNow(), 1),
	}
}

// loadDelayed marks the delayed window as being read and returns the read
// of the DelayedWindow delayed URLs after its end, for the caller to run
// (scan) with f.mu released. f.mu held, f not closed.
func (f *Frontier) loadDelayed() *windowRead {
	f.dloading = true
	f.reading++
	f.loads.Add(1)
	return &windowRead{
		from:  f.dcursor,
		start: delayedKey(f.dcursor.due, f.dcursor.seq+1),
		end:   []byte{kindDelayed + 1},
		limit: f.dwindow,
	}
}

// scan runs ld's store read under ctx (nil: f.base) and f.base, the
// context Close cancels. f.mu not held.
func (f *Frontier) scan(ctx context.Context, ld *windowRead) {
	defer f.loads.Done()
	sctx, stop := f.base, func() {}
	if ctx != nil && ctx.Done() != nil {
		var cancel context.CancelFunc
		sctx, cancel = context.WithCancel(ctx)
		unhook := context.AfterFunc(f.base, cancel)
		stop = func() { unhook(); cancel() }
	}
	ld.kvs, ld.err = f.store.Scan(sctx, ld.start, ld.end, ld.limit)
	stop()
	switch {
	case ld.err == nil:
	case f.base.Err() != nil:
		ld.err = ErrClosed
	case ctx != nil && ctx.Err() != nil:
		ld.err = ctx.Err()
	case ld.h == nil:
		ld.err = fmt.Errorf("frontier: reading delayed URLs: %w", ld.err)
	default:
		ld.err = fmt.Errorf("frontier: reading queue of %s: %w", ld.h.name, ld.err)
	}
}

// endRead ends ld, a band's or the delayed window's read (see endLoad
// and endDelayed), and reports whether a read of the delayed window filed
// any URL. f.mu held.
func (f *Frontier) endRead(ld *windowRead, now int64) (bool, error) {
	if ld.h != nil {
		return false, f.endLoad(ld, now)
	}
	return f.endDelayed(ld)
}

// endLoad ends ld, a read of a band's window. After a successful read (on an
// open frontier) it files the window into the band, and the caller goes
// on with the host; otherwise the band is left as it was, the host is
// scheduled again and a waiter woken (another call may lease it). It
// returns ld's error, or ErrClosed after Close. f.mu held.
func (f *Frontier) endLoad(ld *windowRead, now int64) error {
	h := ld.h
	bq := &h.bands[ld.b]
	h.loading, bq.loading = false, false
	f.reading--
	dirty := bq.dirty
	bq.dirty = false
	err := ld.err
	if err == nil && f.closed {
		err = ErrClosed
	}
	if err != nil {
		f.schedule(h, now)
		f.signal()
		return err
	}
	f.fileWindow(h, ld.b, ld.start, ld.kvs, ld.limit)
	bq.more = bq.more || dirty
	// The leading waiter computed its wake time without the host; it
	// looks again once the caller has gone on with it.
	f.signal()
	return nil
}

// fileWindow files a window of band b of h read from the store at start,
// at most limit URLs: they go to the band's tail and its cursor past them.
// f.mu held.
func (f *Frontier) fileWindow(h *host, b int, start []byte, kvs []KV, limit int) {
	bq := &h.bands[b]
	bq.more = len(kvs) == limit
	prefix := start[:len(start)-8] // every key in [start, end) begins with it
	bq.q.reserve(len(kvs))
	for _, kv := range kvs {
		tail := kv.Key[len(prefix):]
		if len(tail) != 8 {
			// A malformed key. The cursor still moves past it (and no
			// further than the last well-formed key before it could
			// sort), or every load would read it again and the band
			// would never drain: Next would spin on the host.
			f.stats.Corrupt++
			var pad [8]byte
			copy(pad[:], tail)
			c := binary.BigEndian.Uint64(pad[:])
			if len(tail) < 8 {
				c-- // tail sorts before c's key, after c-1's
			}
			bq.cursor = max(bq.cursor, c)
			if bq.cursor == math.MaxUint64 {
				bq.more = false
			}
			continue
		}
		seq := binary.BigEndian.Uint64(tail)
		bq.cursor = max(bq.cursor, seq)
		r, err := decodeRecord(kv.Value, false)
		if err != nil {
			f.stats.Corrupt++
			continue
		}
		bq.q.pushBack(itemFromRecord(&r, uint8(b), seq))
		h.queued++
	}
}

// endDelayed ends ld, a read of the delayed window. After a successful
// read (on an open frontier) that still continues the window (trimDelayed
// did not move its end meanwhile), it files the URLs read into the delayed
// heap, up to the cut (see windowRead), and moves the window's end past
// them. URLs written by a group whose memory update has not run yet are
// skipped; that update files them. It reports whether a URL went into the
// heap, and returns ld's error, or ErrClosed after Close. f.mu held.
func (f *Frontier) endDelayed(ld *windowRead) (bool, error) {
	cut, low := f.dcut, f.dlow
	f.dloading, f.dcut = false, false
	f.reading--
	err := ld.err
	if err == nil && f.closed {
		err = ErrClosed
	}
	filed := false
	if err == nil && f.dcursor == ld.from {
		f.dmore = len(ld.kvs) == f.dwindow || cut
		for _, kv := range ld.kvs {
			due, seq, err := parseDelayedKey(kv.Key)
			if err != nil {
				f.stats.Corrupt++
				continue
			}
			if cut && !(dkey{due, seq}).less(low) {
				break
			}
			if seq > f.appliedSeq {
				continue
			}
			f.dcursor = dkey{due, seq}
			r, err := decodeRecord(kv.Value, true)
			if err != nil {
				f.stats.Corrupt++
				continue
			}
			f.delayed.push(delayedItem{it: itemFromRecord(&r, r.band, seq), host: r.host, due: due})
			filed = true
		}
	}
	f.signal()
	return filed, err
}

// trimDelayed keeps the earliest DelayedWindow delayed URLs in memory and
// drops the others, which are durable delayed keys: the window's end
// (f.dcursor) moves back to the last key kept and loadDelayed reads the
// rest again when the heap drains. The window never ends before f.dfloor,
// the highest key promote took out of the heap: URLs taken out (queued in
// memory, leased, being re-filed or settled) may still have their delayed
// keys in the store, and a load must not read them again; heap URLs up to
// f.dfloor are kept. A URL written by a group whose apply has not run is
// filed by that apply (insertDelayed) against the moved cursor, and one the
// trim drops that was filed by a running group's apply is read by a later
// load once the group's sequence numbers are applied. f.mu held.
func (f *Frontier) trimDelayed() {
	h := f.delayed
	slices.SortFunc(h, func(a, b delayedItem) int {
		ka, kb := dkey{a.due, a.it.seq}, dkey{b.due, b.it.seq}
		switch {
		case ka.less(kb):
			return -1
		case kb.less(ka):
			return 1
		}
		return 0
	})
	keep := f.dwindow
	last := dkey{h[keep-1].due, h[keep-1].it.seq}
	if last.less(f.dfloor) {
		last = f.dfloor
		for keep < len(h) && !last.less(dkey{h[keep].due, h[keep].it.seq}) {
			keep++
		}
	}
	// A sorted slice is a valid heap.
	if keep == len(h) {
		return
	}
	f.delayed = slices.Clone(h[:keep])
	f.dcursor = last
	f.dmore = true
}

// refile returns the write that re-files the due URLs promote left in
// f.moving as queued URLs, or nil if there are none; the caller submits it
// after releasing f.mu. One Store.Write deletes each URL's delayed key and
// puts a queued key (same host and band, a new sequence number, so the URL
// goes to the band's tail) with the same record, so a crash leaves each URL
// under exactly one of the two keys. From here until the write's apply or
// fail the URLs are held only by the op: no queue holds them, so none can
// be leased while it is moved. The apply files them like Added URLs
// (insert: into memory if the band's window has room and nothing of the
// band is left in the store, otherwise the band is marked as having more
// in the store); a failed write puts them back among the delayed URLs,
// whose keys the store still holds. f.mu held.
func (f *Frontier) refile(now int64) *moveOp {
	if len(f.moving) == 0 {
		return nil
	}
	ds := f.moving
	f.moving = nil
	f.nmoving += len(ds)
	vals := make([][]byte, len(ds))
	for i := range ds {
		r := ds[i].it.record(ds[i].host)
		vals[i] = appendRecord(nil, &r, false)
	}
	m := &moveOp{}
	m.op = pendingOp{
		nseq: len(ds),
		write: func(seq uint64, muts []Mutation) []Mutation {
			for i := range ds {
				d := &ds[i]
				muts = append(muts,
					Mutation{Key: delayedKey(d.due, d.it.seq), Delete: true},
					Mutation{Key: queuedKey(d.host, d.it.band, seq+uint64(i)), Value: vals[i]})
			}
			return muts
		},
		apply: func(seq uint64) {
			m.ran = true
			f.nmoving -= len(ds)
			for i := range ds {
				p := prepared{host: ds[i].host, it: ds[i].it}
				p.it.seq = seq + uint64(i)
				p.it.ext = queuedExt(p.it.ext)
				f.insert(&p, now)
			}
		},
		fail: func() {
			m.ran = true
			f.nmoving -= len(ds)
			for i := range ds {
				f.pushDelayed(ds[i])
			}
			f.signal()
		},
	}
	return m
}

// moveOp is a re-filing write built by refile.
type moveOp struct {
	op  pendingOp
	ran bool // apply or fail ran; f.mu
}

// submit writes m through the group commit. An op the committer refused
// (after Close) is undone as a failed one. f.mu not held.
func (m *moveOp) submit(f *Frontier) error {
	err := f.commit.submit(&m.op)
	if err != nil {
		f.mu.Lock()
		if !m.ran {
			m.op.fail()
		}
		f.mu.Unlock()
	}
	return err
}

// queuedExt returns the extension of a delayed URL re-filed under a queued
// key: the same fields without the delayed key's.
func queuedExt(e *itemExt) *itemExt {
	if e == nil || (e.meta == "" && !e.recrawl) {
		return nil
	}
	c := *e
	c.delayed, c.due = false, 0
	return &c
}
