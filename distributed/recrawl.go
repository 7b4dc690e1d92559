package distributed

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkit/crawlkit/bloom"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// Recrawls across nodes.
//
// When a URL settles with a recrawl time (crawlkit.Config.Recrawl, a
// frontier.Schedule, or Outcome.RecrawlAt), the owner publishes the URL's
// next generation as a JetStream scheduled message (nats-server 2.12+,
// ADR-51): a message on the URL's schedule subject,
// crawl.<crawl>.s.<partition>.<URL key>, with "Nats-Schedule: @at <due>"
// and the partition's subject as its target. The stream's leader stores it
// (replicated like any message) and publishes a copy to the partition at the
// due time, then purges the schedule. So the recrawl is durable before the
// URL's message is acknowledged, survives the death of any node and the
// move of its partition (the server holds the timer, not a node), and is
// not delivered before its time.
//
// A generation g > 0 has its own dedup key, msgKey(URL key, g), carried in
// the Crawl-Key header (the server strips the Nats-Msg-Id from a scheduled
// copy), so the primary rule that drops a URL found again does not drop its
// recrawl, and drops a generation delivered twice: a node killed after
// scheduling generation g+1 and before acknowledging g leaves g to be
// fetched again by the next owner (a duplicate fetch, as for any URL), whose
// schedule of g+1 replaces the first on the same subject if it has not
// fired yet (the server rolls a schedule subject up), or else yields a
// second copy of g+1, which is not primary and is dropped. Each generation is
// fetched once, apart from the duplicates a kill causes for any URL.

// keyHeader carries a message's dedup key when it is not its Nats-Msg-Id.
const keyHeader = "Crawl-Key"

// msgKey is the dedup key of generation gen of the URL whose urlnorm.Key
// is key: key itself for the first fetch (gen 0), else a hash of both.
func msgKey(key uint64, gen uint32) uint64 {
	if gen == 0 {
		return key
	}
	return bloom.Key(msgID(key) + "/" + strconv.FormatUint(uint64(gen), 10))
}

// scheduleSubject is the schedule subject of the URL with key key in
// partition p; scheduleSubjects matches all of a crawl's.
func (n names) scheduleSubject(p int, key uint64) string {
	return "crawl." + n.crawl + ".s." + strconv.Itoa(p) + "." + msgID(key)
}
func (n names) scheduleSubjects() string { return "crawl." + n.crawl + ".s.>" }

// checkRecrawlStream reports an ErrConfig error if the crawl's stream
// cannot schedule recrawls: made before this version, or by a server older
// than 2.12 (which ignores AllowMsgSchedules).
func checkRecrawlStream(cfg *jetstream.StreamConfig, nm names) error {
	hasSubject := false
	for _, s := range cfg.Subjects {
		hasSubject = hasSubject || s == nm.scheduleSubjects()
	}
	if !cfg.AllowMsgSchedules || !hasSubject {
		return fmt.Errorf("%w: Crawler.Recrawl needs message schedules (nats-server 2.12 or newer), and stream %s was created without them; start a new crawl id",
			ErrConfig, cfg.Name)
	}
	return nil
}

// scheduleRecrawl publishes generation h.generation+1 of h's URL, due at d.At (rounded
// up to the second, the schedule's precision), with the fingerprint and
// interval d keeps for the URL, and waits until the stream has stored it.
func (q *Queue) scheduleRecrawl(h *heldMsg, d frontier.Decision) error {
	e := h.entry
	gen := h.generation + 1
	due := d.At.Truncate(time.Second)
	if due.Before(d.At) {
		due = due.Add(time.Second)
	}
	data, err := json.Marshal(wireEntry{URL: e.URL, Host: e.Host, Depth: e.Depth, Priority: e.Priority, Meta: e.Meta,
		Gen: gen, NotBefore: d.At.UnixMilli(), Fingerprint: d.Fingerprint, Interval: int64(d.Interval)})
	if err != nil {
		return err
	}
	key := urlnorm.Key(e.URL)
	p := h.part.id
	m := nats.NewMsg(q.names.scheduleSubject(p, key))
	id := msgID(msgKey(key, gen))
	m.Header.Set(jetstream.MsgIDHeader, id)
	m.Header.Set(keyHeader, id)
	m.Header.Set("Nats-Schedule", "@at "+due.UTC().Format(time.RFC3339))
	m.Header.Set("Nats-Schedule-Target", q.names.subject(p))
	m.Data = data
	if err := q.publishAll([]*nats.Msg{m}); err != nil {
		return err
	}
	q.counters.recrawls.Add(1)
	return nil
}

// planRecrawl is frontier.Policy's decision for a URL fetched with outcome
// o (a success or not-modified): a recrawl if the crawl's Schedule or
// o.RecrawlAt asks for one.
func (q *Queue) planRecrawl(h *heldMsg, o frontier.Outcome) (frontier.Decision, bool) {
	if o.Kind != frontier.OutcomeSuccess && o.Kind != frontier.OutcomeNotModified {
		return frontier.Decision{}, false
	}
	d, err := q.cfg.policy().Plan(&frontier.Lease{Fingerprint: h.fp, Interval: h.interval}, o, q.now())
	return d, err == nil && d.Kind == frontier.SettlementRecrawl
}

// recrawls reports whether the crawl schedules recrawls, so never ends by
// itself.
func (q *Queue) recrawls() bool { return q.cfg.Crawler.Recrawl != nil }
