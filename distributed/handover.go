package distributed

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkit/crawlkit/urlnorm"
)

// Handing politeness over with a partition.
//
// Politeness state (when each host may be contacted next) lives in the
// node's fetch.Politeness, which does not move with a partition. So every
// node records, in the crawl's hosts bucket, when each host of its
// partitions may be contacted next:
//
//   - when it claims a lease (just before the fetch), a reservation: the
//     host is busy for HandoverHold (the bound on a fetch that README.md,
//     "Fencing", assumes), published without waiting for the answer, so
//     that a node killed in the middle of a fetch leaves it behind;
//   - when it settles the lease (Done, before the URL's ack), the host's
//     next contact time from its Politeness, waiting for the server.
//
// A node that starts holding a pin after someone else waits FenceTTL (so
// the earlier holder has stopped leasing), then reads the records of the
// partition's hosts and blocks each host in its local frontier until its
// recorded next contact: hosts whose wait is over are fetched at once,
// instead of the whole partition waiting HandoverHold.
//
// A record holds a duration, the wait from when the server stored it; the
// reader takes the records' ages from the server's timestamps, measured
// against the newest record of the partition (so no clocks of two
// machines are compared, and ages come out too small, never too large:
// waits too long, never too short). Records expire after hostRecordTTL.
//
// A record also names the process that wrote it (Queue.writer). If the
// partition's newest record, by stream sequence, is this process's own,
// nobody fetched from the partition since this process last did: its own
// Politeness spaces its own fetches, and the records of earlier holders
// were turned into blocks when it took the partition over from them. So
// it blocks nothing. That is the common case after a consumer leader
// election (a NATS server killed): the pin comes back to the node that
// held it, seconds after its last fetch, and the newest record's age,
// counted as zero, would hold every recently fetched host for its whole
// wait again, or HandoverHold for a fetch whose settle record was lost.

// hostRecord is a value in the hosts bucket.
type hostRecord struct {
	Host string `json:"h"`
	// Wait is how long after the record was stored the host may be
	// contacted again, in milliseconds.
	Wait int64 `json:"w"`
	// By is the writing process's Queue.writer ("" in records of
	// earlier versions).
	By string `json:"by,omitempty"`
}

// hostRecordTTL bounds a record's life: longer than any politeness wait
// but a Retry-After block, which the new owner learns again from the host.
const hostRecordTTL = time.Hour

// hostKey is the bucket key of host in partition p: "p<p>.<HostKey hex>".
func hostKey(p int, host string) string {
	return "p" + strconv.Itoa(p) + "." + msgID(urlnorm.HostKey(host))
}

// hostsBucketConfig is the hosts bucket of a crawl.
func hostsBucketConfig(nm names, replicas int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:   nm.hosts(),
		TTL:      hostRecordTTL,
		History:  1,
		Storage:  jetstream.FileStorage,
		Replicas: replicas,
	}
}

// reserveHost records, without waiting, that host of partition p is being
// fetched now.
func (q *Queue) reserveHost(p int, host string) {
	if q.hosts == nil {
		return
	}
	b, _ := json.Marshal(hostRecord{Host: host, Wait: q.cfg.HandoverHold.Milliseconds(), By: q.writer})
	_, _ = q.js.PublishAsync("$KV."+q.names.hosts()+"."+hostKey(p, host), b)
}

// settleHost records when host of partition p may be contacted next, as
// the node's Politeness says after a fetch, and waits for the server. A
// failure is logged: the next owner then has only the reservation, which
// is longer.
func (q *Queue) settleHost(p int, host string) {
	if q.hosts == nil || q.pol == nil {
		return
	}
	now := q.now()
	wait := max(q.pol.ReadyAt(host, now).Sub(now), 0)
	b, _ := json.Marshal(hostRecord{Host: host, Wait: wait.Milliseconds() + 1, By: q.writer})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := q.hosts.Put(ctx, hostKey(p, host), b); err != nil {
		q.log.Debug("recording a host's next contact", "host", host, "err", err)
	}
}

// hostBlock is one host of a partition and when it may be contacted next,
// measured from the moment the records were read.
type hostBlock struct {
	host string
	wait time.Duration
}

// hostBlocks turns a partition's records into waits from the moment they
// were read: each record's wait less its age, the age measured from the
// newest record's server timestamp (which is at most the server's now).
// own reports that the newest record by stream sequence was written by
// self (a Queue.writer); then there are no blocks (see above).
func hostBlocks(entries []jetstream.KeyValueEntry, self string) (out []hostBlock, own bool) {
	var newest time.Time
	var last jetstream.KeyValueEntry
	for _, e := range entries {
		if e.Created().After(newest) {
			newest = e.Created()
		}
		if last == nil || e.Revision() > last.Revision() {
			last = e
		}
	}
	if last != nil && self != "" {
		var r hostRecord
		if json.Unmarshal(last.Value(), &r) == nil && r.By == self {
			return nil, true
		}
	}
	for _, e := range entries {
		var r hostRecord
		if json.Unmarshal(e.Value(), &r) != nil || r.Host == "" {
			continue
		}
		if w := time.Duration(r.Wait)*time.Millisecond - newest.Sub(e.Created()); w > 0 {
			out = append(out, hostBlock{host: r.Host, wait: w})
		}
	}
	return out, false
}

// readHosts returns the records of partition p's hosts.
func (q *Queue) readHosts(ctx context.Context, p int) ([]jetstream.KeyValueEntry, error) {
	w, err := q.hosts.WatchFiltered(ctx, []string{"p" + strconv.Itoa(p) + ".>"}, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	var out []jetstream.KeyValueEntry
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return nil, errors.New("distributed: hosts watch ended")
			}
			if e == nil { // the initial values are in
				return out, nil
			}
			out = append(out, e)
		}
	}
}

// handOver runs after a new pin's fence wait: it reads the partition's
// host records and blocks each host in the local frontier until its next
// contact, then opens the partition (handover false). If the records
// cannot be read before the old rule's hold (FenceTTL + HandoverHold from
// tenure) is over, the partition opens then, as it did before records.
func (q *Queue) handOver(p *partition, gen, handover int, at, fallback time.Time) {
	if d := at.Sub(q.now()); d > 0 {
		wait(context.Background(), d)
	}
	for try := 0; ; try++ {
		if !q.handoverCurrent(p, gen, handover) {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		entries, err := q.readHosts(ctx, p.id)
		cancel()
		if err == nil {
			read := q.now()
			blocks, own := hostBlocks(entries, q.writer)
			for _, b := range blocks {
				q.front.BlockHost(b.host, read.Add(b.wait))
			}
			q.log.Debug("politeness handed over", "partition", p.id, "hosts", len(entries), "blocked", len(blocks), "newest_own", own)
			break
		}
		q.log.Info("reading the partition's hosts; retrying", "partition", p.id, "err", err)
		if !q.now().Before(fallback) {
			break
		}
		wait(context.Background(), min(time.Duration(try+1)*250*time.Millisecond, fallback.Sub(q.now())))
	}
	q.mu.Lock()
	if p.gen == gen && p.handover == handover {
		p.handingOver = false
	}
	q.mu.Unlock()
	p.wake()
}

// handoverCurrent reports whether handover number handover of acquisition
// gen of p is still the current one.
func (q *Queue) handoverCurrent(p *partition, gen, handover int) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return p.owned && p.gen == gen && p.handover == handover
}
