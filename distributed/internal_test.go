package distributed

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkit/crawlkit/frontier"
)

func durationOf(n int64) time.Duration { return time.Duration(n) }

func TestVersionCheck(t *testing.T) {
	for _, c := range []struct {
		v  string
		ok bool
	}{
		{"2.11.0", true}, {"2.11.4", true}, {"2.12.0-RC.1", true}, {"v2.15.2", true}, {"3.0.0", true},
		{"2.10.29", false}, {"2.9.25", false}, {"1.4.1", false}, {"", false}, {"garbage", false},
	} {
		err := checkServerVersion(c.v)
		if (err == nil) != c.ok {
			t.Errorf("checkServerVersion(%q) = %v, want ok=%v", c.v, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrServerTooOld) {
			t.Errorf("checkServerVersion(%q) = %v, not ErrServerTooOld", c.v, err)
		}
	}
}

func TestMsgIDRoundTrip(t *testing.T) {
	for _, k := range []uint64{0, 1, 0xdeadbeef, 1<<64 - 1, 0x0123456789abcdef} {
		id := msgID(k)
		got, ok := keyOfMsgID(id)
		if !ok || got != k || len(id) != 16 {
			t.Errorf("msgID(%#x) = %q, back %#x %v", k, id, got, ok)
		}
	}
	for _, bad := range []string{"", "123", "zzzzzzzzzzzzzzzz", "0123456789abcdef0"} {
		if _, ok := keyOfMsgID(bad); ok {
			t.Errorf("keyOfMsgID(%q) accepted", bad)
		}
	}
}

// TestPlanRetry checks that the queue retries and gives up by
// frontier.Policy: the backoff doubles from RetryBase to RetryMax with the
// acquisition's attempts, a longer Retry-After wins, and the URL is given up
// at its MaxAttempts-th retry.
func TestPlanRetry(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	q := &Queue{now: func() time.Time { return now }, cfg: Config{MaxAttempts: 6, RetryBase: 100, RetryMax: 1000}}
	for _, c := range []struct {
		prev   int
		after  int64
		expect int64
	}{
		{0, 0, 100}, {1, 0, 200}, {2, 0, 400}, {3, 0, 800}, {4, 0, 1000}, {0, 5000, 5000},
	} {
		d := q.planRetry(c.prev, durationOf(c.after))
		if d.Kind != frontier.SettlementRetrying || d.Attempt != c.prev+1 || int64(d.At.Sub(now)) != c.expect {
			t.Errorf("planRetry(%d, %d) = %v attempt %d in %d, want retrying attempt %d in %d",
				c.prev, c.after, d.Kind, d.Attempt, d.At.Sub(now), c.prev+1, c.expect)
		}
	}
	if d := q.planRetry(5, 0); d.Kind != frontier.SettlementGivenUp || d.Attempt != 6 {
		t.Errorf("planRetry(5, 0) = %v attempt %d, want given up at 6", d.Kind, d.Attempt)
	}
}

// FuzzServerVersion feeds arbitrary version strings (the server reports its
// own) and message ids to the parsers: they must not panic, and an accepted
// version is at least itself.
func FuzzServerVersion(f *testing.F) {
	for _, s := range []string{"2.11.0", "v2.12.0-RC.1", "2.9", "", "...", "2.11.0.7", "99999999999999999999.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if versionAtLeast(v, MinServerVersion) && !versionAtLeast(v, v) {
			t.Errorf("%q accepted but not at least itself", v)
		}
		if k, ok := keyOfMsgID(v); ok && msgID(k) != v && len(v) == 16 {
			// Upper-case hex parses too; its canonical form differs.
			if back, _ := keyOfMsgID(msgID(k)); back != k {
				t.Errorf("key %#x of %q does not round-trip", k, v)
			}
		}
	})
}

// fenceQueue is a Queue with just what the fencing rules use, on a clock
// the test moves.
func fenceQueue(now *time.Time) (*Queue, *partition) {
	cfg := Config{MemberTTL: 2 * time.Second, HandoverHold: time.Second, Logger: slog.New(slog.DiscardHandler)}
	q := &Queue{cfg: cfg, log: cfg.Logger, now: func() time.Time { return *now }, held: map[string]*heldMsg{}, settling: map[string]*heldMsg{},
		fenceTTL: cfg.fenceTTL()}
	p := &partition{id: 7, owned: true, gen: 1, kick: make(chan struct{}, 1)}
	q.parts = []*partition{p}
	return q, p
}

func TestFenceRules(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	q, p := fenceQueue(&now)
	ttl := q.fenceTTL // 1 s
	open := func() bool { return q.openLocked(p, now) }

	// The consumer's first delivery ever: no hold, but nothing is fetched
	// before the pin is confirmed.
	q.notePinLocked(p, "A", 1)
	if open() || !p.fetchFrom.IsZero() {
		t.Fatalf("open before confirmation (fetchFrom %v)", p.fetchFrom)
	}
	q.confirmLocked(p, now, "A", "s1")
	if !open() {
		t.Fatal("confirmed pin, no hold: want open")
	}
	// A confirmation lasts fenceTTL from when it was asked for.
	now = t0.Add(ttl - time.Millisecond)
	if !open() {
		t.Error("closed before fenceTTL")
	}
	now = t0.Add(ttl)
	if open() {
		t.Error("open fenceTTL after the last confirmation")
	}
	q.confirmLocked(p, now, "A", "s1")
	q.notePinLocked(p, "A", 2)
	q.notePinLocked(p, "A", 3)
	if !open() {
		t.Fatal("same pin: want open")
	}

	// Another pin named by the server: fenced at once, and the messages
	// stay held (the holder or this node gives the partition up when
	// their membership views agree).
	q.held["u1"] = &heldMsg{entry: frontierEntry("u1"), part: p, gen: 1}
	q.held["u2"] = &heldMsg{entry: frontierEntry("u2"), part: p, gen: 1, leased: true}
	p.nheld = 2
	for range 3 {
		if back := q.confirmLocked(p, now, "B", "s1"); back != nil || open() {
			t.Fatalf("foreign pin: handed back %d, open %v; want fenced, nothing handed back", len(back), open())
		}
	}
	// No pin at all, twice in a row: one unleased message goes back as a
	// probe (the server pins a client only when it delivers), at most once
	// per fenceTTL.
	if back := q.confirmLocked(p, now, "", "s1"); back != nil {
		t.Fatal("handed back on the first answer without a pin")
	}
	if back := q.confirmLocked(p, now, "", "s1"); len(back) != 1 || q.held["u1"] != nil || q.held["u2"] == nil || p.nheld != 1 {
		t.Fatalf("second answer without a pin: handed back %d, held %v, nheld %d; want u1 back, u2 kept", len(back), q.held, p.nheld)
	}
	q.held["u3"] = &heldMsg{entry: frontierEntry("u3"), part: p, gen: 1}
	p.nheld++
	probed := now
	for range 4 {
		now = probed.Add(ttl / 2)
		if back := q.confirmLocked(p, now, "", "s1"); back != nil {
			t.Fatal("probed again within fenceTTL")
		}
	}
	now = probed.Add(ttl)
	if back := q.confirmLocked(p, now, "", "s1"); len(back) != 1 || q.held["u3"] != nil {
		t.Fatalf("no pin fenceTTL after the probe: handed back %d, want u3", len(back))
	}

	// The pin comes back to this node after another was delivered to
	// (a gap in the delivery sequence): hold fenceTTL + HandoverHold from
	// when the pin was first seen, even once confirmed.
	now = t0.Add(10 * time.Second)
	q.notePinLocked(p, "C", 9)
	q.confirmLocked(p, now, "C", "s1")
	if want := now.Add(ttl + q.cfg.HandoverHold); !p.fetchFrom.Equal(want) || open() {
		t.Fatalf("after a gap: fetchFrom %v, open %v; want hold until %v", p.fetchFrom, open(), want)
	}
	now = p.fetchFrom
	q.confirmLocked(p, now, "C", "s1")
	if !open() {
		t.Fatal("hold over and confirmed: want open")
	}

	// A new pin with contiguous deliveries under the same consumer leader:
	// nobody else was pinned, no hold.
	q.notePinLocked(p, "D", 10)
	q.confirmLocked(p, now, "D", "s1")
	if !open() {
		t.Fatalf("contiguous re-pin, same leader: want open (fetchFrom %v)", p.fetchFrom)
	}
	// The same with a new leader (which may reuse delivery sequences):
	// hold.
	q.notePinLocked(p, "E", 11)
	q.confirmLocked(p, now, "E", "s2")
	if open() || !p.fetchFrom.Equal(now.Add(ttl+q.cfg.HandoverHold)) {
		t.Fatalf("contiguous re-pin, new leader: open %v, fetchFrom %v; want a hold", open(), p.fetchFrom)
	}

	// An answer for the pin this node no longer has is not a confirmation.
	now = p.fetchFrom
	q.notePinLocked(p, "F", 20)
	q.confirmLocked(p, now, "E", "s2")
	if open() || !p.confirmed.IsZero() {
		t.Error("an answer naming the old pin confirmed the new one")
	}
}

func frontierEntry(u string) frontier.Entry { return frontier.Entry{URL: u} }

// fakeMsg records what the Queue does with a message.
type fakeMsg struct {
	jetstream.Msg // nil: any other method panics
	naks, acks    int
	ackErr        error // what DoubleAck answers
}

func (m *fakeMsg) NakWithDelay(time.Duration) error          { m.naks++; return nil }
func (m *fakeMsg) DoubleAck(context.Context) error           { m.acks++; return m.ackErr }
func (m *fakeMsg) Metadata() (*jetstream.MsgMetadata, error) { return &jetstream.MsgMetadata{}, nil }

// settleQueue is fenceQueue with a local frontier, for tests of Done: at
// most 3 attempts, backed off from 1 s to 1 min.
func settleQueue(t *testing.T, now *time.Time) (*Queue, *partition, *frontier.Frontier) {
	t.Helper()
	q, p := fenceQueue(now)
	q.cfg.MaxAttempts, q.cfg.RetryBase, q.cfg.RetryMax = 3, time.Second, time.Minute
	front, err := frontier.New(frontier.Config{Now: q.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { front.Close() })
	q.front = front
	q.settled = sync.NewCond(&q.mu)
	return q, p, front
}

// TestAttemptsCountedByTheNode checks that a URL is given up after
// MaxAttempts fetches that ended in a retry, and backed off by them,
// counted by the acquisition, not by the message's delivery count (which
// handovers raise too).
func TestAttemptsCountedByTheNode(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q, p, front := settleQueue(t, &now)
	p.retries, p.open = map[uint64]int{}, map[uint64]struct{}{7: {}}
	p.pin, p.confirmed = "A", now
	const u = "http://a.test/x"
	for attempt := 1; attempt <= 3; attempt++ {
		// Each attempt comes with a delivery count far above MaxAttempts,
		// as after many handovers.
		m := &fakeMsg{}
		q.held[u] = &heldMsg{msg: m, entry: frontier.Entry{URL: u, Host: "a.test"}, part: p, gen: 1, seq: 7, tries: 40}
		p.nheld++
		if err := front.Add(frontier.Entry{URL: u, Host: "a.test"}); err != nil {
			t.Fatal(err)
		}
		l, _, err := q.NextAt(now)
		if err != nil || l == nil {
			t.Fatalf("attempt %d: no lease (%v)", attempt, err)
		}
		s, err := q.Done(l, frontier.Retry(0))
		if err != nil {
			t.Fatal(err)
		}
		wantNak, wantAck := 1, 0
		// The backoff doubles with the attempts, not the deliveries
		// (40 of them would have capped it at RetryMax).
		want := frontier.Settlement{Kind: frontier.SettlementRetrying, At: now.Add(time.Second << (attempt - 1)), Attempt: attempt}
		if attempt == 3 {
			wantNak, wantAck = 0, 1
			want = frontier.Settlement{Kind: frontier.SettlementGivenUp, Attempt: 3}
		}
		if s != want {
			t.Errorf("attempt %d: Done reports %+v, want %+v", attempt, s, want)
		}
		if m.naks != wantNak || m.acks != wantAck {
			t.Errorf("attempt %d: %d naks, %d acks; want %d, %d", attempt, m.naks, m.acks, wantNak, wantAck)
		}
		now = now.Add(time.Minute) // past the local frontier's politeness delay
		p.confirmed = now
	}
	if g := q.counters.given.Load(); g != 1 {
		t.Errorf("given up %d, want 1", g)
	}
	if _, ok := p.retries[7]; ok {
		t.Error("the acknowledged message's retry count was kept")
	}
}

// TestClaimStagesWhileFenced checks that a lease of a fenced partition is
// not handed out, that its message stays held, and that it comes back to
// the local frontier once the pin is confirmed.
func TestClaimStagesWhileFenced(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q, p := fenceQueue(&now)
	front, err := frontier.New(frontier.Config{Now: q.now})
	if err != nil {
		t.Fatal(err)
	}
	defer front.Close()
	q.front = front
	const u = "http://a.test/x"
	e := frontier.Entry{URL: u, Host: "a.test"}
	q.held[u] = &heldMsg{msg: &fakeMsg{}, entry: e, part: p, gen: 1, seq: 3}
	p.nheld, p.pin = 1, "A" // delivered under pin A, not confirmed yet
	if err := front.Add(e); err != nil {
		t.Fatal(err)
	}
	if l, _, err := q.NextAt(now); err != nil || l != nil {
		t.Fatalf("fenced partition: lease %v, %v; want none", l, err)
	}
	if h := q.held[u]; h == nil || !h.staged || len(p.staged) != 1 {
		t.Fatalf("the message was not kept staged: %+v, staged %d", h, len(p.staged))
	}
	q.unstage(p, 1) // still fenced: stays staged
	if len(p.staged) != 1 {
		t.Fatal("unstaged while fenced")
	}
	now = now.Add(time.Minute) // past the local frontier's politeness delay
	q.confirmLocked(p, now, "A", "s1")
	q.unstage(p, 1)
	l, _, err := q.NextAt(now)
	if err != nil || l == nil || l.URL != u {
		t.Fatalf("after confirmation: lease %v, %v; want %s", l, err, u)
	}
	if h := q.held[u]; h == nil || !h.leased || h.staged {
		t.Fatalf("held message after the lease: %+v", h)
	}
}

// TestDoneWhileADeliveryHoldsThePartition checks that a worker's Done does
// not wait for the partition's seen-set lock, which a delivery holds while
// it catches up by a replay (seconds, when the server is slow): with every
// worker settling a URL of partitions that were replaying, a node stood
// still for seconds after a server kill. The acknowledged message leaves
// the open set once the lock is free again.
func TestDoneWhileADeliveryHoldsThePartition(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q, p, front := settleQueue(t, &now)
	p.retries, p.handled, p.open = map[uint64]int{}, map[uint64]struct{}{}, map[uint64]struct{}{7: {}, 8: {}, 9: {}}
	p.pin, p.confirmed = "A", now

	settle := func(u string, seq uint64, o frontier.Outcome, ackErr error) *fakeMsg {
		t.Helper()
		m := &fakeMsg{ackErr: ackErr}
		q.held[u] = &heldMsg{msg: m, entry: frontier.Entry{URL: u, Host: "a.test"}, part: p, gen: 1, seq: seq, tries: 1}
		p.nheld++
		if err := front.Add(frontier.Entry{URL: u, Host: "a.test"}); err != nil {
			t.Fatal(err)
		}
		l, _, err := q.NextAt(now)
		if err != nil || l == nil {
			t.Fatalf("%s: no lease (%v)", u, err)
		}
		done := make(chan error, 1)
		go func() { _, err := q.Done(l, o); done <- err }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(time.Minute): // a bound for a stuck test, not a timing assertion
			t.Fatalf("%s: Done waited for the partition's lock", u)
		}
		now = now.Add(time.Minute) // past the local frontier's politeness delay
		p.confirmed = now
		return m
	}

	p.mu.Lock() // a delivery catching up
	if m := settle("http://a.test/retry", 8, frontier.Retry(0), nil); m.naks != 1 {
		t.Errorf("retry: %d naks, want 1", m.naks)
	}
	if m := settle("http://a.test/ok", 7, frontier.Success(0), nil); m.acks != 1 {
		t.Errorf("success: %d acks, want 1", m.acks)
	}
	// An ack that gets no answer (AckWait is 0 here: one attempt): the
	// message is remembered as handled, for its redelivery.
	if m := settle("http://a.test/lost", 9, frontier.Success(0), context.DeadlineExceeded); m.acks != 1 {
		t.Errorf("unanswered ack: %d attempts, want 1", m.acks)
	}
	if !p.wasHandled(9) {
		t.Error("the message whose ack got no answer is not remembered as handled")
	}
	p.book.Lock()
	retries := p.retries[8]
	p.book.Unlock()
	if retries != 1 {
		t.Errorf("retry count %d, want 1", retries)
	}
	if _, open := p.open[7]; !open {
		t.Error("the open set changed while the delivery held its lock")
	}
	p.mu.Unlock()
	waitFor(t, "the acknowledged message to leave the open set", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		_, open := p.open[7]
		return !open
	})
	p.mu.Lock()
	_, retryOpen := p.open[8]
	_, lostOpen := p.open[9]
	p.mu.Unlock()
	if !retryOpen || !lostOpen {
		t.Errorf("the messages sent back for a retry (open %v) and whose ack got no answer (open %v) must stay open",
			retryOpen, lostOpen)
	}
}
