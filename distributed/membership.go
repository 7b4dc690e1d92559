package distributed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// MemberInfo is what a node publishes in the membership bucket with each
// heartbeat.
type MemberInfo struct {
	ID string `json:"id"`
	// HTTP is the address of the node's stats server ("host:port"), if
	// it has one.
	HTTP    string    `json:"http,omitempty"`
	Started time.Time `json:"started"`
	// Moves and MovesFor are published by the member that balances the
	// load (the live member with the smallest ID; balance.go): the
	// partitions it moved away from their Owners assignment, by new
	// owner, planned for the live members MovesFor.
	Moves    map[int]string `json:"moves,omitempty"`
	MovesFor []string       `json:"moves_for,omitempty"`
}

// membership keeps this node's heartbeat in the bucket and a view of the
// live members.
//
// A member is live while its last heartbeat is younger than ttl, measured
// on the watch's own clock: the arrival time of the newest update of any
// member (this node's included). If the watch stalls (the bucket's stream
// is electing a leader), no member expires in this node's view, so a NATS
// hiccup does not make every node believe it is alone. Nor does its end:
// the heartbeats come back one at a time, and the first one would make
// every member not yet heard again look ttl old. The watch's clock skips a
// silence longer than two heartbeat intervals (stallAfter), so a member
// expires after ttl of the watch running without its heartbeat.
type membership struct {
	kv  jetstream.KeyValue
	id  string
	ttl time.Duration
	now func() time.Time
	log *slog.Logger

	changed chan struct{}

	infoMu sync.Mutex
	info   MemberInfo
	infoB  []byte // info, encoded

	mu    sync.Mutex
	seen  map[string]time.Time // member -> arrival of its last heartbeat
	ref   time.Time            // arrival of the newest update
	ready bool                 // the initial values were read
	live  []string
	// started is each member's MemberInfo.Started, by its own clock.
	started map[string]time.Time
	self    time.Time // this node's Started
	// raw is each member's newest heartbeat as it came, and moves the
	// Moves it carried, decoded when raw changes.
	raw   map[string][]byte
	moves map[string]memberMoves
}

// stallAfter is the silence of the watch, in heartbeat intervals, past
// which it stalled: every member heartbeats each interval, this node too,
// so a running watch brings an update at least that often.
const stallAfter = 2

// interval is the time between two heartbeats of a member: a quarter of
// the ttl, so that one or two late heartbeats do not expire it.
func (m *membership) interval() time.Duration { return m.ttl / 4 }

// memberMoves is a member's published moves.
type memberMoves struct {
	to      map[int]string
	forLive []string
}

func newMembership(kv jetstream.KeyValue, info MemberInfo, ttl time.Duration, now func() time.Time, log *slog.Logger) (*membership, error) {
	b, err := json.Marshal(info)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &membership{kv: kv, id: info.ID, info: info, infoB: b, ttl: ttl, now: now, log: log,
		changed: make(chan struct{}, 1), seen: map[string]time.Time{},
		started: map[string]time.Time{}, self: info.Started,
		raw: map[string][]byte{}, moves: map[string]memberMoves{}}, nil
}

// setMoves puts moves, planned for members, into this node's heartbeat
// from the next one on (nil: none).
func (m *membership) setMoves(members []string, moves map[int]string) {
	m.infoMu.Lock()
	defer m.infoMu.Unlock()
	m.info.Moves, m.info.MovesFor = moves, members
	if b, err := json.Marshal(m.info); err == nil {
		m.infoB = b
	}
}

// owners returns the owner of every partition among live: Owners, with the
// moves that live's smallest member published for exactly live.
func (m *membership) owners(live []string, partitions int) []string {
	if len(live) == 0 {
		return Owners(live, partitions)
	}
	m.mu.Lock()
	mv := m.moves[live[0]]
	m.mu.Unlock()
	if !slices.Equal(mv.forLive, live) {
		mv.to = nil
	}
	return withMoves(live, partitions, mv.to)
}

func memberKey(id string) string { return "node." + id }

// heartbeat puts this node's key once.
func (m *membership) heartbeat(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, m.ttl/2)
	defer cancel()
	m.infoMu.Lock()
	b := m.infoB
	m.infoMu.Unlock()
	if _, err := m.kv.Put(ctx, memberKey(m.id), b); err != nil {
		return err
	}
	return nil
}

// run heartbeats and watches until ctx ends.
func (m *membership) run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		t := time.NewTicker(m.interval())
		defer t.Stop()
		var lastLog time.Time
		for {
			if err := m.heartbeat(ctx); err != nil && ctx.Err() == nil && time.Since(lastLog) > 5*time.Second {
				// Say so, at most every 5 s.
				lastLog = time.Now()
				m.log.Info("membership heartbeat failed", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	go func() {
		defer wg.Done()
		m.watch(ctx)
	}()
	wg.Wait()
}

// watch follows the bucket, restarting the watcher if it fails.
func (m *membership) watch(ctx context.Context) {
	for ctx.Err() == nil {
		w, err := m.kv.WatchAll(ctx)
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(m.ttl / 8):
			}
			continue
		}
		m.follow(ctx, w)
		_ = w.Stop()
	}
}

func (m *membership) follow(ctx context.Context, w jetstream.KeyWatcher) {
	t := time.NewTicker(max(m.ttl/8, 50*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.recompute()
		case e, ok := <-w.Updates():
			if !ok {
				return
			}
			m.apply(e)
		}
	}
}

// apply records one watch update; a nil entry ends the initial values.
func (m *membership) apply(e jetstream.KeyValueEntry) {
	now := m.now()
	movesChanged := false
	m.mu.Lock()
	if e == nil {
		m.ready = true
	} else if id, ok := cutMemberKey(e.Key()); ok {
		if gap := now.Sub(m.ref); m.ready && !m.ref.IsZero() && gap > stallAfter*m.interval() {
			// The watch was silent: that time is not held against
			// any member (see membership).
			for member, at := range m.seen {
				m.seen[member] = at.Add(gap)
			}
			m.ref = now
			m.log.Debug("membership watch was silent; its silence does not count against the members", "silence", gap.Round(time.Millisecond))
		}
		switch e.Operation() {
		case jetstream.KeyValuePut:
			at := now
			if !m.ready {
				// An initial value: judge it by the server's timestamp.
				if c := e.Created(); c.Before(now) {
					at = c
				}
			}
			m.seen[id] = at
			// A heartbeat changes only when its member's moves do:
			// decode it then, not every time.
			if v := e.Value(); !bytes.Equal(v, m.raw[id]) {
				m.raw[id] = slices.Clone(v)
				var info MemberInfo
				if json.Unmarshal(v, &info) == nil {
					if _, known := m.started[id]; !known && !info.Started.IsZero() {
						m.started[id] = info.Started
					}
					old := m.moves[id]
					if !maps.Equal(old.to, info.Moves) || !slices.Equal(old.forLive, info.MovesFor) {
						m.moves[id] = memberMoves{to: info.Moves, forLive: info.MovesFor}
						movesChanged = true
					}
				}
			}
			if at.After(m.ref) {
				m.ref = at
			}
		default: // delete or purge: a graceful leave
			delete(m.seen, id)
			delete(m.started, id)
			delete(m.raw, id)
			if _, ok := m.moves[id]; ok {
				delete(m.moves, id)
				movesChanged = true
			}
		}
	}
	m.mu.Unlock()
	if movesChanged {
		m.signal()
	}
	m.recompute()
}

// signal tells the rebalancing loop that the assignment may have changed.
func (m *membership) signal() {
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

func cutMemberKey(k string) (string, bool) {
	if len(k) > len("node.") && k[:len("node.")] == "node." {
		return k[len("node."):], true
	}
	return "", false
}

// recompute derives the live set and signals a change.
func (m *membership) recompute() {
	m.mu.Lock()
	if !m.ready {
		m.mu.Unlock()
		return
	}
	live := make([]string, 0, len(m.seen))
	for id, at := range m.seen {
		if m.ref.Sub(at) < m.ttl {
			live = append(live, id)
		}
	}
	slices.Sort(live)
	changed := !slices.Equal(live, m.live)
	m.live = live
	m.mu.Unlock()
	if changed {
		m.signal()
	}
}

// joinedRunning reports whether this node joined a crawl that was already
// running: its view is ready and holds a live member that started more
// than lead before this node. Such a node need not wait for nodes started
// with it before its first assignment (Node.rebalance).
func (m *membership) joinedRunning(lead time.Duration) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.ready || !slices.Contains(m.live, m.id) {
		return false
	}
	for _, id := range m.live {
		if s, ok := m.started[id]; ok && id != m.id && s.Before(m.self.Add(-lead)) {
			return true
		}
	}
	return false
}

// members returns the live members, sorted, and whether the view is ready
// (the initial values were read and this node's own heartbeat is in it).
func (m *membership) members() ([]string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.live), m.ready && slices.Contains(m.live, m.id)
}

// leave deletes this node's key, so the others rebalance at once.
func (m *membership) leave(ctx context.Context) error {
	err := m.kv.Delete(ctx, memberKey(m.id))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil
	}
	return err
}
