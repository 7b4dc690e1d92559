package distributed

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// Bounding the log: seen-set snapshots and purging settled URLs.
//
// A partition's seen set is a function of its log: the URL keys of its
// messages, in stream order. Its owner writes that set down every
// SnapshotEvery messages it judges: the keys, the stream sequence they cover
// (every message of the partition up to it), and the primaries above the ack
// floor that it does not know to be acknowledged. The body goes to the
// crawl's object store (crawl_<id>_seen), under a name of its own; a pointer
// to it goes to the key of the partition in the crawl's snapshots bucket
// (crawl_<id>_snapshots), with a compare-and-set on the key's revision, and
// only when it covers more than the pointer there: the snapshot a partition's
// pointer names never covers less than an earlier one, whichever node (a
// stale owner among them) writes.
//
// Once a pointer covers sequence C, the owner purges the partition's subject
// below min(C, ack floor) + 1: those messages are acknowledged (never
// delivered again) and in a durable snapshot (never replayed again). A new
// owner loads the snapshot, then replays only the messages after C; a node
// that has to catch up (judge) first adopts a snapshot that covers more than
// it has read, so it never reads a purged stretch. The stream then holds the
// messages above the lower of the ack floor and the newest snapshot, not
// every message ever published. A URL is never forgotten: it leaves the
// stream only when a durable snapshot has its key.

// snapshotMagic starts a snapshot body (version 1).
const snapshotMagic = "CKSEEN\x00\x01"

// seenSnapshot is a partition's seen set at a stream sequence.
type seenSnapshot struct {
	covers uint64   // every message of the partition up to here is in keys
	keys   []uint64 // the dedup keys of those messages (msgKey)
	open   []uint64 // primaries above the ack floor not known to be acknowledged
}

var errSnapshotCorrupt = errors.New("distributed: corrupt seen-set snapshot")

// encode returns the snapshot's body: magic, covers, the keys and the open
// sequences (each a count and little-endian uint64s), and a CRC-32C of all
// that.
func (s *seenSnapshot) encode() []byte {
	b := make([]byte, 0, len(snapshotMagic)+8*(3+len(s.keys)+len(s.open))+4)
	b = append(b, snapshotMagic...)
	b = binary.LittleEndian.AppendUint64(b, s.covers)
	for _, list := range [][]uint64{s.keys, s.open} {
		b = binary.LittleEndian.AppendUint64(b, uint64(len(list)))
		for _, v := range list {
			b = binary.LittleEndian.AppendUint64(b, v)
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// decodeSeenSnapshot reads a body written by encode.
func decodeSeenSnapshot(b []byte) (*seenSnapshot, error) {
	n := len(b)
	if n < len(snapshotMagic)+8*3+4 || string(b[:len(snapshotMagic)]) != snapshotMagic {
		return nil, fmt.Errorf("%w: no snapshot header", errSnapshotCorrupt)
	}
	if crc32.Checksum(b[:n-4], castagnoli) != binary.LittleEndian.Uint32(b[n-4:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", errSnapshotCorrupt)
	}
	r := b[len(snapshotMagic) : n-4]
	s := &seenSnapshot{covers: binary.LittleEndian.Uint64(r)}
	r = r[8:]
	for _, list := range []*[]uint64{&s.keys, &s.open} {
		if len(r) < 8 {
			return nil, fmt.Errorf("%w: truncated", errSnapshotCorrupt)
		}
		c := binary.LittleEndian.Uint64(r)
		r = r[8:]
		if c > uint64(len(r)/8) {
			return nil, fmt.Errorf("%w: %d values announced, room for %d", errSnapshotCorrupt, c, len(r)/8)
		}
		*list = make([]uint64, c)
		for i := range *list {
			(*list)[i] = binary.LittleEndian.Uint64(r[8*i:])
		}
		r = r[8*c:]
	}
	if len(r) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", errSnapshotCorrupt, len(r))
	}
	return s, nil
}

// snapshotRef is what a node knows of a partition's newest durable
// snapshot: the revision of its pointer, the sequence it covers and the
// object holding it. The zero value: none.
type snapshotRef struct {
	rev    uint64
	covers uint64
	object string
}

// snapshotPointer is the value of a partition's key in the snapshots bucket.
type snapshotPointer struct {
	Covers uint64 `json:"covers"`
	Object string `json:"object"`
	Keys   int    `json:"keys"`
}

// snapshots are a crawl's seen-set snapshots: pointers in a key-value
// bucket, bodies in an object store (a body outgrows a message).
type snapshots struct {
	kv  jetstream.KeyValue
	obs jetstream.ObjectStore
	// nc and bucket read pointers from the bucket stream's leader
	// (leaderGet).
	nc     *nats.Conn
	bucket string
}

// snapshotsBucket and seenObjects name a crawl's pointer bucket and object
// store.
func (n names) snapshotsBucket() string { return "crawl_" + n.crawl + "_snapshots" }
func (n names) seenObjects() string     { return "crawl_" + n.crawl + "_seen" }

// openSnapshots returns the crawl's snapshot buckets, creating them if need
// be.
func openSnapshots(ctx context.Context, js jetstream.JetStream, nm names, replicas int) (*snapshots, error) {
	kv, err := js.KeyValue(ctx, nm.snapshotsBucket())
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:   nm.snapshotsBucket(),
			History:  1,
			Storage:  jetstream.FileStorage,
			Replicas: max(replicas, 1),
		})
	}
	if err != nil {
		return nil, err
	}
	obs, err := js.ObjectStore(ctx, nm.seenObjects())
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		obs, err = js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket:   nm.seenObjects(),
			Storage:  jetstream.FileStorage,
			Replicas: max(replicas, 1),
		})
	}
	if err != nil {
		return nil, err
	}
	return &snapshots{kv: kv, obs: obs, nc: js.Conn(), bucket: nm.snapshotsBucket()}, nil
}

// pointerKey is partition p's key in the snapshots bucket.
func pointerKey(p int) string { return "p" + strconv.Itoa(p) }

// pointer reads partition p's pointer; a zero snapshotRef if it has none.
//
// It asks the bucket stream's leader. KeyValue.Get is a direct get, which a
// follower may answer before it has applied the newest write (NATS does
// not promise read-your-writes for key-value reads): a pointer read as
// missing or older then makes a takeover replay the stream without the
// snapshot, and the URLs purged since are forgotten and fetched again.
func (s *snapshots) pointer(ctx context.Context, p int) (snapshotRef, error) {
	m, err := leaderGet(ctx, s.nc, "KV_"+s.bucket, "$KV."+s.bucket+"."+pointerKey(p))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return snapshotRef{}, nil
	}
	if err != nil {
		return snapshotRef{}, fmt.Errorf("distributed: reading the snapshot pointer of partition %d: %w", p, err)
	}
	if op := m.Header.Get("KV-Operation"); op != "" { // deleted or purged
		return snapshotRef{}, nil
	}
	var ptr snapshotPointer
	if err := json.Unmarshal(m.Data, &ptr); err != nil || ptr.Object == "" {
		return snapshotRef{}, fmt.Errorf("%w: pointer of partition %d: %q", errSnapshotCorrupt, p, m.Data)
	}
	return snapshotRef{rev: m.Sequence, covers: ptr.Covers, object: ptr.Object}, nil
}

// leaderGet returns the last message on subject in stream, read by the
// stream's leader: the JetStream API's message get, never a direct get.
// jetstream.ErrMsgNotFound if there is none.
func leaderGet(ctx context.Context, nc *nats.Conn, stream, subject string) (*jetstream.RawStreamMsg, error) {
	req, _ := json.Marshal(struct {
		LastFor string `json:"last_by_subj"`
	}{subject})
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
	}
	msg, err := nc.RequestWithContext(ctx, jetstream.DefaultAPIPrefix+"STREAM.MSG.GET."+stream, req)
	if err != nil {
		return nil, err
	}
	var resp struct {
		Error   *jetstream.APIError `json:"error"`
		Message *struct {
			Subject  string    `json:"subject"`
			Sequence uint64    `json:"seq"`
			Header   []byte    `json:"hdrs"`
			Data     []byte    `json:"data"`
			Time     time.Time `json:"time"`
		} `json:"message"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return nil, fmt.Errorf("message get from %s: %w", stream, err)
	}
	switch {
	case resp.Error != nil && resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound:
		return nil, jetstream.ErrMsgNotFound
	case resp.Error != nil:
		return nil, resp.Error
	case resp.Message == nil:
		return nil, jetstream.ErrInvalidJetStreamResponse
	}
	out := &jetstream.RawStreamMsg{Subject: resp.Message.Subject, Sequence: resp.Message.Sequence, Data: resp.Message.Data,
		Time: resp.Message.Time}
	if len(resp.Message.Header) > 0 {
		if out.Header, err = nats.DecodeHeadersMsg(resp.Message.Header); err != nil {
			return nil, fmt.Errorf("message get from %s: %w", stream, err)
		}
	}
	return out, nil
}

// load returns partition p's newest snapshot and its ref, or nil and a
// zero ref if the partition has none. A body replaced between reading the
// pointer and the body is looked up again.
func (s *snapshots) load(ctx context.Context, p int) (*seenSnapshot, snapshotRef, error) {
	for try := 1; ; try++ {
		ref, err := s.pointer(ctx, p)
		if err != nil || ref.rev == 0 {
			return nil, ref, err
		}
		b, err := s.obs.GetBytes(ctx, ref.object)
		if errors.Is(err, jetstream.ErrObjectNotFound) && try < 3 {
			continue
		}
		if err != nil {
			return nil, snapshotRef{}, fmt.Errorf("distributed: snapshot of partition %d (%s): %w", p, ref.object, err)
		}
		snap, err := decodeSeenSnapshot(b)
		if err == nil && snap.covers != ref.covers {
			err = fmt.Errorf("%w: %s covers %d, its pointer says %d", errSnapshotCorrupt, ref.object, snap.covers, ref.covers)
		}
		if err != nil {
			return nil, snapshotRef{}, err
		}
		return snap, ref, nil
	}
}

// errSnapshotStale is returned by store when the partition's pointer
// already covers at least as much as the snapshot offered.
var errSnapshotStale = errors.New("distributed: a newer snapshot exists")

// store makes snap partition p's snapshot, if it covers more than the
// pointer's: it writes the body under a new name, then moves the pointer
// from prev (the ref this node knows) with a compare-and-set, and deletes
// the body prev named. It returns the ref now in force: snap's, or with
// errSnapshotStale the newer one found (its body is then deleted again).
func (s *snapshots) store(ctx context.Context, p int, snap *seenSnapshot, prev snapshotRef) (snapshotRef, error) {
	name := fmt.Sprintf("p%d.%d.%s", p, snap.covers, nuid.Next())
	if _, err := s.obs.PutBytes(ctx, name, snap.encode()); err != nil {
		return prev, fmt.Errorf("distributed: writing the snapshot of partition %d: %w", p, err)
	}
	val, _ := json.Marshal(snapshotPointer{Covers: snap.covers, Object: name, Keys: len(snap.keys)})
	for try := 1; ; try++ {
		var rev uint64
		var err error
		if prev.rev == 0 {
			rev, err = s.kv.Create(ctx, pointerKey(p), val)
		} else {
			rev, err = s.kv.Update(ctx, pointerKey(p), val, prev.rev)
		}
		if err == nil {
			if prev.object != "" {
				// A failure leaves an orphan body behind, never a
				// dangling pointer.
				_ = s.obs.Delete(ctx, prev.object)
			}
			return snapshotRef{rev: rev, covers: snap.covers, object: name}, nil
		}
		// The pointer moved (another node wrote), or the request failed:
		// look at it again.
		cur, rerr := s.pointer(ctx, p)
		switch {
		case rerr != nil:
			_ = s.obs.Delete(ctx, name)
			return prev, fmt.Errorf("distributed: moving the snapshot pointer of partition %d: %w", p, errors.Join(err, rerr))
		case cur.covers >= snap.covers && cur.rev != 0:
			_ = s.obs.Delete(ctx, name)
			return cur, errSnapshotStale
		case cur.rev == prev.rev || try >= 3:
			_ = s.obs.Delete(ctx, name)
			return prev, fmt.Errorf("distributed: moving the snapshot pointer of partition %d: %w", p, err)
		}
		prev = cur
	}
}

// capture returns the partition's seen set as a snapshot at hw, with the
// open primaries above floor (the consumer's ack floor, read before). It
// requires p.mu held and p.seen set.
func (p *partition) capture(floor uint64) *seenSnapshot {
	s := &seenSnapshot{covers: p.hw, keys: make([]uint64, 0, p.store.Len())}
	_ = p.store.ForEach(func(k uint64) error { s.keys = append(s.keys, k); return nil })
	for seq := range p.open {
		if seq > floor {
			s.open = append(s.open, seq)
		}
	}
	slices.Sort(s.open)
	return s
}

// adopt merges a snapshot into the partition's seen set: its keys, its
// open primaries above the ack floor, and hw raised to what it covers
// (nothing changes if the set covers as much already). It requires p.mu
// held and p.seen set.
func (p *partition) adopt(s *seenSnapshot, ref snapshotRef) error {
	if ref.covers > p.snap.covers {
		p.snap = ref
	}
	if s.covers <= p.hw {
		return nil
	}
	if p.seen.Len() == 0 {
		if err := p.seen.AddKeys(s.keys); err != nil {
			return err
		}
	} else {
		for _, k := range s.keys {
			if _, err := p.seen.TestAndAddKey(k); err != nil {
				return err
			}
		}
	}
	for _, seq := range s.open {
		if seq > p.ackFloor {
			p.open[seq] = struct{}{}
		}
	}
	p.hw, p.fresh = s.covers, 0
	return nil
}

// adoptNewer adopts the partition's snapshot if it covers more than the
// seen set: before a catch-up, which must not read a stretch that another
// owner purged. A failure is logged: the catch-up reads what the stream
// has. It requires p.mu held and p.seen set.
func (q *Queue) adoptNewer(p *partition) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ref, err := q.snaps.pointer(ctx, p.id)
	if err != nil || ref.covers <= p.hw {
		if err != nil {
			q.log.Debug("reading the partition's snapshot pointer", "partition", p.id, "err", err)
		}
		return
	}
	snap, ref, err := q.snaps.load(ctx, p.id)
	if err == nil && snap != nil {
		err = p.adopt(snap, ref)
	}
	if err != nil {
		q.log.Warn("adopting a newer snapshot before catching up", "partition", p.id, "err", err)
		return
	}
	q.counters.snapshotLoads.Add(1)
}

// compact snapshots partition p's seen set if SnapshotEvery messages were
// judged since the last snapshot, then purges the partition's subject below
// the lower of the newest durable snapshot and the consumer's ack floor.
func (q *Queue) compact(ctx context.Context, p *partition) error {
	if q.snaps == nil {
		return nil
	}
	q.mu.Lock()
	owned := p.owned
	q.mu.Unlock()
	if !owned {
		return nil
	}
	ci, err := p.consumer.Info(ctx)
	if err != nil {
		return err
	}
	floor := ci.AckFloor.Stream
	p.mu.Lock()
	if p.seen == nil { // released meanwhile
		p.mu.Unlock()
		return nil
	}
	acq, ref, fresh := p.acq, p.snap, p.fresh
	var snap *seenSnapshot
	if fresh >= q.cfg.SnapshotEvery && p.hw > ref.covers {
		snap = p.capture(floor)
	}
	p.mu.Unlock()
	if snap != nil {
		nref, err := q.snaps.store(ctx, p.id, snap, ref)
		p.mu.Lock()
		if p.acq == acq {
			if nref.covers > p.snap.covers {
				p.snap = nref
			}
			if err == nil {
				p.fresh = max(p.fresh-fresh, 0)
			}
		}
		ref = p.snap
		p.mu.Unlock()
		switch {
		case err == nil:
			q.counters.snapshots.Add(1)
			q.counters.snapshotKeys.Store(int64(len(snap.keys)))
		case !errors.Is(err, errSnapshotStale):
			return err
		}
	}
	upto := min(ref.covers, floor)
	p.mu.Lock()
	skip := p.acq != acq || upto <= p.purgedTo
	p.mu.Unlock()
	if skip {
		return nil
	}
	if err := q.stream.Purge(ctx, jetstream.WithPurgeSubject(p.subject), jetstream.WithPurgeSequence(upto+1)); err != nil {
		return fmt.Errorf("distributed: purging partition %d below %d: %w", p.id, upto+1, err)
	}
	p.mu.Lock()
	if p.acq == acq && upto > p.purgedTo {
		p.purgedTo = upto
	}
	p.mu.Unlock()
	q.counters.purges.Add(1)
	return nil
}

// compactLoop compacts every owned partition every interval until ctx
// ends.
func (q *Queue) compactLoop(ctx context.Context, interval time.Duration) {
	if q.snaps == nil {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, p := range q.parts {
			if ctx.Err() != nil {
				return
			}
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			if err := q.compact(cctx, p); err != nil && ctx.Err() == nil {
				q.log.Info("compacting a partition", "partition", p.id, "err", err)
			}
			cancel()
		}
	}
}
