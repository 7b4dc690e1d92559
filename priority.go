package crawlkit

import (
	"math"

	"github.com/crawlkit/crawlkit/frontier"
)

// A Handler re-ranks a page's links through Link.Priority, which the
// Crawler queues as frontier.Entry.Priority for the Prioritizer to read.

// handlerFirst is the Crawler's default Prioritizer: breadth first
// (frontier.BFS), except that a link the Handler gave a Priority goes into
// the most urgent band.
type handlerFirst struct{}

// Band returns 0 for a positive Priority, else the BFS band.
func (handlerFirst) Band(e *frontier.Entry, bands int) int {
	if e.Priority > 0 {
		return 0
	}
	return frontier.BFS{}.Band(e, bands)
}

// prioritizer returns the frontier's Prioritizer: p, or handlerFirst.
func prioritizer(p frontier.Prioritizer) frontier.Prioritizer {
	if p == nil {
		return handlerFirst{}
	}
	return p
}

// linkPriority is p as the frontier takes it: finite and not negative.
func linkPriority(p float64) float64 {
	if p < 0 || math.IsNaN(p) || math.IsInf(p, 0) {
		return 0
	}
	return p
}
