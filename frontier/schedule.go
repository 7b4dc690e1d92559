package frontier

import "time"

// Schedule decides when a successfully fetched URL is fetched again. The
// frontier calls it when a lease settles with OutcomeSuccess or
// OutcomeNotModified and the outcome names no explicit RecrawlAt; the URL is
// then queued again at the settle time plus the returned interval. A
// non-positive interval means "do not recrawl".
//
// changed reports whether the content changed since the previous fetch: it is
// false for OutcomeNotModified (an HTTP 304) and for a success whose content
// fingerprint equals the previous one, and true otherwise (including the
// first fetch, when prev is zero).
type Schedule interface {
	Next(prev time.Duration, changed bool) time.Duration
}

// FixedInterval is a Schedule that recrawls every URL after the same
// interval, whatever the content did (Nutch's DefaultFetchSchedule).
type FixedInterval time.Duration

// Next returns the fixed interval.
func (i FixedInterval) Next(time.Duration, bool) time.Duration { return time.Duration(i) }

// Adaptive is a Schedule that shortens a URL's interval when its content
// changed and lengthens it when it did not, within [Min, Max]. It is Apache
// Nutch's AdaptiveFetchSchedule (the same rule as StormCrawler's
// AdaptiveScheduler, which compares content signatures the same way):
//
//	changed:   interval *= 1 - DecRate
//	unchanged: interval *= 1 + IncRate
//
// The zero value uses Nutch's defaults: Initial 30 days
// (db.fetch.interval.default = 2592000 s), Min 60 s
// (db.fetch.schedule.adaptive.min_interval), Max 365 days
// (db.fetch.schedule.adaptive.max_interval), IncRate 0.4 and DecRate 0.2
// (db.fetch.schedule.adaptive.inc_rate / dec_rate). Nutch warns that rates
// above 0.4 make the interval swing rather than converge. Nutch's optional
// "sync delta" correction needs the page's modification time, which the
// frontier does not track, so it is left out.
type Adaptive struct {
	Initial, Min, Max time.Duration
	IncRate, DecRate  float64
}

// Defaults of Adaptive, from Apache Nutch's nutch-default.xml.
const (
	AdaptiveInitial = 30 * 24 * time.Hour
	AdaptiveMin     = time.Minute
	AdaptiveMax     = 365 * 24 * time.Hour
	AdaptiveIncRate = 0.4
	AdaptiveDecRate = 0.2
)

// Next returns the next interval: Initial when prev is zero, otherwise prev
// scaled by the change rule and clamped to [Min, Max].
func (a Adaptive) Next(prev time.Duration, changed bool) time.Duration {
	initial, lo, hi := a.Initial, a.Min, a.Max
	inc, dec := a.IncRate, a.DecRate
	if initial <= 0 {
		initial = AdaptiveInitial
	}
	if lo <= 0 {
		lo = AdaptiveMin
	}
	if hi <= 0 {
		hi = AdaptiveMax
	}
	if inc <= 0 {
		inc = AdaptiveIncRate
	}
	if dec <= 0 || dec >= 1 {
		dec = AdaptiveDecRate
	}
	next := initial
	if prev > 0 {
		f := float64(prev)
		if changed {
			f *= 1 - dec
		} else {
			f *= 1 + inc
		}
		if f > float64(hi) {
			f = float64(hi)
		}
		next = time.Duration(f)
	}
	return min(max(next, lo), hi)
}
