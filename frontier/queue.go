package frontier

import "math"

// item is one queued URL as the frontier holds it in memory. It is kept
// small (40 bytes) because an in-memory frontier holds one per queued URL;
// rarely used fields live behind ext.
type item struct {
	url      string
	seq      uint64
	ext      *itemExt
	prio     float32
	depth    uint16
	attempts uint8
	band     uint8
}

// itemExt holds the fields most queued URLs do not have.
type itemExt struct {
	meta     string
	fp       uint64 // content fingerprint of the previous fetch
	interval int64  // recrawl interval in nanoseconds
	recrawl  bool   // fp and interval are set
	delayed  bool   // stored under a delayed key (due, seq) rather than a queued key
	due      int64  // the delayed key's time
}

func (it *item) meta() string {
	if it.ext == nil {
		return ""
	}
	return it.ext.meta
}

// record converts it to its stored form.
func (it *item) record(host string) record {
	r := record{
		host:     host,
		band:     it.band,
		url:      it.url,
		depth:    uint64(it.depth),
		attempts: uint64(it.attempts),
		prio:     float64(it.prio),
	}
	if it.ext != nil {
		r.meta = it.ext.meta
		r.recrawl = it.ext.recrawl
		r.fp = it.ext.fp
		r.interval = it.ext.interval
	}
	return r
}

// itemFromRecord converts a stored record back into an item.
func itemFromRecord(r *record, band uint8, seq uint64) item {
	it := item{
		url:      r.url,
		seq:      seq,
		prio:     prio32(r.prio),
		depth:    uint16(min(r.depth, math.MaxUint16)),
		attempts: uint8(min(r.attempts, math.MaxUint8)),
		band:     band,
	}
	if r.meta != "" || r.recrawl {
		it.ext = &itemExt{meta: r.meta, fp: r.fp, interval: r.interval, recrawl: r.recrawl}
	}
	return it
}

// prio32 narrows a priority to float32 without turning a tiny positive value
// into zero (which would mean "a seed" to OPIC).
func prio32(p float64) float32 {
	if p <= 0 || math.IsNaN(p) {
		return 0
	}
	if p > math.MaxFloat32 {
		return math.MaxFloat32
	}
	f := float32(p)
	if f == 0 {
		return math.SmallestNonzeroFloat32
	}
	return f
}

// ring is a double-ended queue in a growable ring buffer. It grows by
// a quarter (not doubling) to keep the slack of many small per-host queues
// low (at most 25%, at the price of more frequent copies), and shrinks when
// it empties out.
type ring[T any] struct {
	buf  []T
	head int32
	n    int32
}

func (r *ring[T]) len() int { return int(r.n) }

func (r *ring[T]) grow() {
	c := len(r.buf)
	r.resize(max(c+c/4, c+2))
}

// reserve makes room for k more at once, exactly: a window's URLs, or
// with a Store the one URL most hosts of a large crawl hold in memory
// (Config.MaxInMemory).
func (r *ring[T]) reserve(k int) {
	if need := int(r.n) + k; need > len(r.buf) {
		r.resize(need)
	}
}

func (r *ring[T]) resize(nc int) {
	nb := make([]T, nc)
	c := int32(len(r.buf))
	for i := int32(0); i < r.n; i++ {
		nb[i] = r.buf[(r.head+i)%c]
	}
	r.buf = nb
	r.head = 0
}

func (r *ring[T]) pushBack(v T) {
	if int(r.n) == len(r.buf) {
		r.grow()
	}
	i := r.head + r.n
	if c := int32(len(r.buf)); i >= c {
		i -= c
	}
	r.buf[i] = v
	r.n++
}

func (r *ring[T]) pushFront(v T) {
	if int(r.n) == len(r.buf) {
		r.grow()
	}
	r.head--
	if r.head < 0 {
		r.head += int32(len(r.buf))
	}
	r.buf[r.head] = v
	r.n++
}

func (r *ring[T]) front() *T { return &r.buf[r.head] }

func (r *ring[T]) popFront() T {
	var zero T
	v := r.buf[r.head]
	r.buf[r.head] = zero
	r.head++
	if int(r.head) == len(r.buf) {
		r.head = 0
	}
	r.n--
	switch {
	case r.n == 0 && len(r.buf) > 64:
		r.buf, r.head = nil, 0
	case len(r.buf) > 64 && int(r.n) < len(r.buf)/4:
		r.resize(len(r.buf) / 2)
	}
	return v
}

// bandQueue is one priority band of a host's back queue: the window of its
// URLs held in memory, and, with a Store, where the window ends in the
// store.
type bandQueue struct {
	q ring[item]
	// cursor is the highest queued-key seq of this band loaded from or
	// written through to memory; every stored URL of the band with a
	// lower or equal seq is in q or leased.
	cursor uint64
	// more reports that the store may hold URLs of this band after cursor.
	more bool
	// loading: a windowRead is reading the band's next window; dirty: URLs
	// of the band were added while it did (see windowRead).
	loading, dirty bool
}

// host is a back queue: one host's URLs by band, and its politeness state.
type host struct {
	name        string
	bands       []bandQueue
	queued      int32 // URLs in memory, not leased
	outstanding int32 // leases not yet settled
	readyAt     int64 // politeness: earliest next contact (Unix ns)
	blocked     int64 // BlockHost: no contact before (Unix ns)
	heapAt      int64 // key in the time heap
	heapIdx     int32 // index in the time heap, -1 when absent
	readyTok    uint32
	readyBand   uint8 // the band whose ready list holds the host, when readyTok != 0
	loading     bool  // a windowRead is reading one of its bands (see windowRead)
	// unread counts the bands after the allocated ones that the store may
	// hold URLs of: recovery learns a host's first band with URLs and
	// marks the later ones so, without allocating them (see band).
	unread uint8
}

// band returns band b of the host, allocating the bands up to b: most hosts
// only ever use one or two bands. A band allocated among the unread ones
// may hold URLs in the store.
func (h *host) band(b int) *bandQueue {
	if n := len(h.bands); b >= n {
		if b < cap(h.bands) {
			h.bands = h.bands[:b+1]
		} else {
			nb := make([]bandQueue, b+1)
			copy(nb, h.bands)
			h.bands = nb
		}
		for i := n; i < n+int(h.unread) && i <= b; i++ {
			h.bands[i].more = true
		}
		h.unread = uint8(max(n+int(h.unread)-(b+1), 0))
	}
	return &h.bands[b]
}

// bandFull reports whether band b holds window URLs in memory.
func (h *host) bandFull(b uint8, window int) bool {
	return int(b) < len(h.bands) && h.bands[b].q.len() >= window
}

// bandMore reports whether the store may hold URLs of band b beyond those
// in memory.
func (h *host) bandMore(b uint8) bool {
	if int(b) >= len(h.bands) {
		return int(b) < len(h.bands)+int(h.unread)
	}
	return h.bands[b].more
}

// eligibleAt is the earliest time the host may be leased.
func (h *host) eligibleAt() int64 { return max(h.readyAt, h.blocked) }

// hasWork reports whether the host has URLs to hand out, in memory or in the
// store.
func (h *host) hasWork() bool {
	if h.queued > 0 || h.unread > 0 {
		return true
	}
	for i := range h.bands {
		if h.bands[i].more {
			return true
		}
	}
	return false
}

// bestBand is the first band with URLs in memory or in the store.
func (h *host) bestBand() int {
	for i := range h.bands {
		if h.bands[i].q.n > 0 || h.bands[i].more {
			return i
		}
	}
	if h.unread > 0 {
		return len(h.bands)
	}
	return max(len(h.bands)-1, 0)
}

// timeHeap is a min-heap of hosts by heapAt: hosts with work that are
// waiting for their politeness delay or a block to pass, and idle hosts
// whose politeness state is kept until it no longer matters.
type timeHeap []*host

func (t timeHeap) less(i, j int) bool { return t[i].heapAt < t[j].heapAt }

func (t timeHeap) swap(i, j int) {
	t[i], t[j] = t[j], t[i]
	t[i].heapIdx = int32(i)
	t[j].heapIdx = int32(j)
}

func (t timeHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !t.less(i, p) {
			break
		}
		t.swap(i, p)
		i = p
	}
}

func (t timeHeap) down(i int) {
	n := len(t)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && t.less(r, l) {
			m = r
		}
		if !t.less(m, i) {
			return
		}
		t.swap(i, m)
		i = m
	}
}

func (t *timeHeap) upsert(h *host, at int64) {
	if h.heapIdx >= 0 {
		old := h.heapAt
		h.heapAt = at
		if at < old {
			t.up(int(h.heapIdx))
		} else if at > old {
			t.down(int(h.heapIdx))
		}
		return
	}
	h.heapAt = at
	h.heapIdx = int32(len(*t))
	*t = append(*t, h)
	t.up(len(*t) - 1)
}

func (t *timeHeap) remove(h *host) {
	i := int(h.heapIdx)
	if i < 0 {
		return
	}
	last := len(*t) - 1
	if i != last {
		t.swap(i, last)
	}
	(*t)[last] = nil
	*t = (*t)[:last]
	if i != last {
		t.down(i)
		t.up(i)
	}
	h.heapIdx = -1
}

// readyRef is an entry of a band's ready list; it is stale unless tok still
// equals the host's readyTok.
type readyRef struct {
	h   *host
	tok uint32
}

// delayedItem is a URL waiting for its due time (a retry, a recrawl, or an
// Add with a future NotBefore).
type delayedItem struct {
	it   item
	host string
	due  int64
}

// dkey orders delayed URLs: by due time, then by seq.
type dkey struct {
	due int64
	seq uint64
}

func (a dkey) less(b dkey) bool {
	if a.due != b.due {
		return a.due < b.due
	}
	return a.seq < b.seq
}

type delayedHeap []delayedItem

func (d delayedHeap) less(i, j int) bool {
	return dkey{d[i].due, d[i].it.seq}.less(dkey{d[j].due, d[j].it.seq})
}

func (d *delayedHeap) push(v delayedItem) {
	*d = append(*d, v)
	h := *d
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (d *delayedHeap) pop() delayedItem {
	h := *d
	v := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = delayedItem{}
	h = h[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		m := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*d = h
	if len(h) == 0 && cap(h) > 1024 {
		*d = nil
	}
	return v
}

// leaseHeap is a min-heap of active leases by deadline.
type leaseHeap []*Lease

func (t leaseHeap) less(i, j int) bool { return t[i].deadline < t[j].deadline }

func (t leaseHeap) swap(i, j int) {
	t[i], t[j] = t[j], t[i]
	t[i].heapIdx = i
	t[j].heapIdx = j
}

func (t leaseHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !t.less(i, p) {
			break
		}
		t.swap(i, p)
		i = p
	}
}

func (t leaseHeap) down(i int) {
	n := len(t)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && t.less(r, l) {
			m = r
		}
		if !t.less(m, i) {
			return
		}
		t.swap(i, m)
		i = m
	}
}

func (t *leaseHeap) push(l *Lease) {
	l.heapIdx = len(*t)
	*t = append(*t, l)
	t.up(len(*t) - 1)
}

func (t *leaseHeap) remove(l *Lease) {
	i := l.heapIdx
	if i < 0 {
		return
	}
	last := len(*t) - 1
	if i != last {
		t.swap(i, last)
	}
	(*t)[last] = nil
	*t = (*t)[:last]
	if i != last {
		t.down(i)
		t.up(i)
	}
	l.heapIdx = -1
}

func (t leaseHeap) fix(l *Lease) {
	if l.heapIdx >= 0 {
		t.down(l.heapIdx)
		t.up(l.heapIdx)
	}
}
