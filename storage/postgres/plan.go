package postgres

import "github.com/crawlkit/crawlkit/frontier"

// dbState is how the urls table spells the state d leaves its URL in:
// queued again (a retry or a recrawl), done, or failed (given up
// included).
func dbState(d *frontier.Decision) int16 {
	switch d.Kind {
	case frontier.SettlementRetrying, frontier.SettlementRecrawl:
		return 0
	case frontier.SettlementFinished:
		return 2
	}
	return 3
}

// fetched reports whether d settles a fetch (OutcomeSuccess or
// OutcomeNotModified), which the urls table records.
func fetched(d *frontier.Decision) bool {
	return d.Kind == frontier.SettlementFinished || d.Kind == frontier.SettlementRecrawl
}
