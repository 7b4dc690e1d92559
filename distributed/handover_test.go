package distributed

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkit/crawlkit/frontier"
)

// fakeEntry is a hosts bucket entry.
type fakeEntry struct {
	jetstream.KeyValueEntry // nil: other methods panic
	value                   []byte
	created                 time.Time
	revision                uint64
}

func (e fakeEntry) Value() []byte      { return e.value }
func (e fakeEntry) Created() time.Time { return e.created }
func (e fakeEntry) Revision() uint64   { return e.revision }

// entry is a record of host, stored at created with revision rev, written
// by process by.
func entry(t *testing.T, host string, wait time.Duration, created time.Time, rev uint64, by string) jetstream.KeyValueEntry {
	b, err := json.Marshal(hostRecord{Host: host, Wait: wait.Milliseconds(), By: by})
	if err != nil {
		t.Fatal(err)
	}
	return fakeEntry{value: b, created: created, revision: rev}
}

// TestHostBlocks checks how a new holder turns a partition's host records
// into waits: each record's wait less its age, the age taken from the
// server timestamps against the newest record (never from the reader's
// clock), and hosts whose wait is over not blocked at all.
func TestHostBlocks(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	records := []jetstream.KeyValueEntry{
		entry(t, "a.test", 30*time.Second, t0, 1, "x"),                    // reservation of a fetch 10 s before the newest record
		entry(t, "b.test", time.Second, t0.Add(5*time.Second), 2, "self"), // its wait was over 4 s before the newest
		entry(t, "c.test", 2*time.Second, t0.Add(10*time.Second), 3, "y"), // the newest record
		fakeEntry{value: []byte("not json"), created: t0},
	}
	want := []hostBlock{{"a.test", 20 * time.Second}, {"c.test", 2 * time.Second}}
	for _, self := range []string{"self", "", "z"} {
		if got, own := hostBlocks(records, self); !slices.Equal(got, want) || own {
			t.Errorf("reader %q: hostBlocks = %v, own %v; want %v, not own", self, got, own, want)
		}
	}
	if got, own := hostBlocks(nil, "self"); len(got) != 0 || own {
		t.Errorf("no records: %v, own %v", got, own)
	}
}

// TestHostBlocksOwnNewest checks that a reader whose own record is the
// partition's newest, by stream sequence, blocks nothing: nobody fetched
// from the partition after it (its own Politeness spaces its own fetches).
// The newest by server timestamp does not decide: two stream leaders'
// clocks may disagree.
func TestHostBlocksOwnNewest(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	got, own := hostBlocks([]jetstream.KeyValueEntry{
		entry(t, "a.test", 30*time.Second, t0, 1, "x"),
		entry(t, "b.test", 30*time.Second, t0.Add(time.Second), 5, "self"),
		entry(t, "c.test", 30*time.Second, t0.Add(2*time.Second), 4, "y"), // later timestamp, earlier in the stream
	}, "self")
	if len(got) != 0 || !own {
		t.Errorf("own newest record: hostBlocks = %v, own %v; want none, own", got, own)
	}
	got, own = hostBlocks([]jetstream.KeyValueEntry{
		entry(t, "b.test", 30*time.Second, t0.Add(time.Second), 5, "self"),
		entry(t, "c.test", 30*time.Second, t0, 6, "y"), // earlier timestamp, later in the stream
	}, "self")
	want := []hostBlock{{"b.test", 30 * time.Second}, {"c.test", 29 * time.Second}}
	if !slices.Equal(got, want) || own {
		t.Errorf("another's newest record: hostBlocks = %v, own %v; want %v, not own", got, own, want)
	}
}

// TestHostKeyIsPerPartition checks that a host's record key names its
// partition, which a new holder filters on.
func TestHostKeyIsPerPartition(t *testing.T) {
	k := hostKey(12, "www.example.com")
	if len(k) != len("p12.")+16 || k[:4] != "p12." {
		t.Errorf("hostKey = %q", k)
	}
	if hostKey(12, "www.example.com") != k || hostKey(12, "example.com") == k {
		t.Error("hostKey is not a function of the host")
	}
}

// TestHandOverAfterOwnRecords runs a handover against a server's hosts
// bucket: when the partition's newest record is this process's own (a
// reservation it published, as a pin that comes back to its holder after
// a consumer leader election finds), no host is blocked; when another
// process wrote after it, every recorded host is.
func TestHandOverAfterOwnRecords(t *testing.T) {
	url := embeddedServer(t, "handover")
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cfg, err := Config{NATSURL: url, NodeID: "a", CrawlID: "handover", Partitions: 1,
		MemberTTL: 2 * time.Second, AckWait: time.Minute, HandoverHold: 30 * time.Second, Now: clk.Now}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	n := newTestNode(t, url, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if n.q.hosts, err = n.q.js.CreateKeyValue(ctx, hostsBucketConfig(n.q.names, 1)); err != nil {
		t.Fatal(err)
	}
	put := func(host, by string) {
		t.Helper()
		b, _ := json.Marshal(hostRecord{Host: host, Wait: 30_000, By: by})
		if _, err := n.q.hosts.Put(ctx, hostKey(0, host), b); err != nil {
			t.Fatal(err)
		}
	}
	reserve := func(host string) {
		t.Helper()
		n.q.reserveHost(0, host)
		select {
		case <-n.q.js.PublishAsyncComplete():
		case <-ctx.Done():
			t.Fatal("reservation not stored")
		}
		e, err := n.q.hosts.Get(ctx, hostKey(0, host))
		if err != nil {
			t.Fatal(err)
		}
		var r hostRecord
		if err := json.Unmarshal(e.Value(), &r); err != nil || r.By != n.q.writer || n.q.writer == "" {
			t.Fatalf("reservation %s: by %q, want this process's %q (%v)", e.Value(), r.By, n.q.writer, err)
		}
	}
	handOver := func() {
		n.q.mu.Lock()
		n.p.owned, n.p.handingOver = true, true
		n.p.handover++
		gen, h := n.p.gen, n.p.handover
		n.q.mu.Unlock()
		n.q.handOver(n.p, gen, h, clk.Now(), clk.Now().Add(time.Minute))
		n.q.mu.Lock()
		n.p.owned = false
		n.q.mu.Unlock()
	}
	leased := func(hosts ...string) []string {
		t.Helper()
		for _, h := range hosts {
			if err := n.q.front.AddAt(clk.Now(), frontier.Entry{URL: "http://" + h + "/"}); err != nil {
				t.Fatal(err)
			}
		}
		var got []string
		for {
			l, _, err := n.q.front.NextAt(clk.Now())
			if err != nil {
				t.Fatal(err)
			}
			if l == nil {
				break
			}
			got = append(got, l.Host)
		}
		slices.Sort(got)
		return got
	}

	put("b.test", "another")
	reserve("a.test")
	handOver()
	if got := leased("a.test", "b.test"); !slices.Equal(got, []string{"a.test", "b.test"}) {
		t.Errorf("own newest record: leased %v, want both hosts", got)
	}

	put("d.test", "another")
	reserve("e.test")
	put("f.test", "another")
	handOver()
	if got := leased("d.test", "e.test", "f.test", "g.test"); !slices.Equal(got, []string{"g.test"}) {
		t.Errorf("another's newest record: leased %v, want only the host without a record", got)
	}
}
