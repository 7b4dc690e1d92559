package frontier

import "math"

// Prioritizer assigns a URL to one of the frontier's priority bands (the
// front queues of the Mercator design) when it is added. Band 0 is the most
// urgent. Implementations must be safe for concurrent use and should be
// cheap: the frontier calls Band once per added URL.
type Prioritizer interface {
	// Band returns e's band in [0, bands); values outside are clamped.
	Band(e *Entry, bands int) int
}

// PrioritizerFunc adapts a function to a Prioritizer.
type PrioritizerFunc func(e *Entry, bands int) int

// Band calls fn.
func (fn PrioritizerFunc) Band(e *Entry, bands int) int { return fn(e, bands) }

// BFS prioritizes by link depth, breadth first: depth 0 (seeds) in band 0,
// depth 1 in band 1, and everything at depth bands-1 or deeper in the last
// band. With the frontier's weighted band selection, shallow pages are
// fetched first across the crawl while deeper ones still get a share.
type BFS struct{}

// Band returns min(depth, bands-1).
func (BFS) Band(e *Entry, bands int) int {
	return min(max(e.Depth, 0), bands-1)
}

// OPIC prioritizes by online page importance (Abiteboul, Preda and Cobena,
// "Adaptive on-line page importance computation", WWW 2003): every page holds
// "cash"; seeds start with SeedCash, and a fetched page passes its cash on to
// its out-links in equal shares (Distribute). Pages holding more cash are
// more important; the band is the order of magnitude of how much less cash a
// page holds than a seed:
//
//	band = floor(log_Base(SeedCash / cash))
//
// so with Base 10 a page one level below a seed with ten links lands in band
// 1, and a page linked from a seed with two links stays in band 0. Entry's
// Priority field carries the cash (zero means a seed).
//
// The paper credits cash that reaches a page from several parents; here the
// cash is fixed when the URL is added, because the seen set in front of the
// frontier drops rediscoveries and the frontier does not re-rank queued
// URLs. This is the single-pass approximation Nutch's OPIC scoring makes
// between crawl-database updates.
type OPIC struct {
	// SeedCash is a seed's cash. Zero means 1.
	SeedCash float64
	// Base is the cash ratio between neighbouring bands. Zero means 10.
	Base float64
}

func (o OPIC) seed() float64 {
	if o.SeedCash > 0 {
		return o.SeedCash
	}
	return 1
}

// Band maps e.Priority (cash) to a band.
func (o OPIC) Band(e *Entry, bands int) int {
	cash := e.Priority
	if cash <= 0 || math.IsNaN(cash) {
		cash = o.seed()
	}
	base := o.Base
	if base <= 1 {
		base = 10
	}
	r := math.Log(o.seed()/cash) / math.Log(base)
	if r <= 0 {
		return 0
	}
	if r >= float64(bands-1) {
		return bands - 1
	}
	return int(r)
}

// Distribute gives each of links an equal share of the cash of the page they
// were found on (parentCash, the Priority of the parent's Lease; zero means a
// seed's cash), setting their Priority. Call it before Add.
func (o OPIC) Distribute(parentCash float64, links []Entry) {
	if len(links) == 0 {
		return
	}
	if parentCash <= 0 || math.IsNaN(parentCash) {
		parentCash = o.seed()
	}
	share := parentCash / float64(len(links))
	for i := range links {
		links[i].Priority = share
	}
}
