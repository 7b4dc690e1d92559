package redis

import "github.com/crawlkit/crawlkit/frontier"

// stateFailed is how the scripts spell a failed URL.
const stateFailed = "f"

// dbState is how the scripts spell the state d leaves its URL in: queued
// again (a retry or a recrawl), done, or failed (given up included).
func dbState(d *frontier.Decision) string {
	switch d.Kind {
	case frontier.SettlementRetrying, frontier.SettlementRecrawl:
		return "q"
	case frontier.SettlementFinished:
		return "d"
	}
	return stateFailed
}
