// Package frontiertest is the conformance kit for frontier.Store
// implementations. A storage adapter (PostgreSQL, Redis, a user's own
// database) proves itself by passing Run in its tests:
//
//	func TestFrontierStore(t *testing.T) {
//		frontiertest.Run(t, func(t *testing.T, dir string) frontier.Store {
//			s, err := mystore.Open(dir) // or a table/key prefix derived from dir
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
//
// Run calls open with a fresh dir for every scenario, closes the store with
// Close, and calls open again with the same dir to check that what was
// written survived. A store that does not live in a directory (a database
// server, process memory) uses dir only as a name: stores opened with
// different dirs must be independent (for example a table, schema or key
// prefix per dir), and opening a dir again must see its earlier contents.
//
// What it checks:
//
//   - Store: key order (byte order, keys with 0x00 and 0xff bytes, prefixes
//     of each other), Scan bounds and limits, later mutations of a key
//     winning within one Write, deletes (also of absent keys), slices
//     owned by the caller on both sides, atomic visibility of a Write (its
//     puts and deletes) to concurrent Scans for as long as the writer
//     writes, and durability across Close and open.
//   - The frontier on the store: URLs of a host come back in band order and
//     first-in first-out within a band, through windows far smaller than
//     the queue; an expired lease's URL is leased again and the late Done
//     fails with frontier.ErrLeaseExpired; across Close and reopen no
//     acknowledged URL is lost and no settled URL comes back, with retry
//     counts and recrawl state intact; Done reports each settlement (a
//     retry due after its backoff, given up at MaxAttempts, also when its
//     earlier attempts were made before a reopen; a recrawl due by the
//     Schedule or Outcome.RecrawlAt; a failure; a plain success);
//     concurrent Add, Next and Done settle every URL exactly once.
//
// The scenarios use a fake clock (the frontier's At methods), so they never
// sleep; a store that answers in milliseconds runs the kit in seconds.
package frontiertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// Opener opens the store kept under dir (see the package documentation).
// It reports failures through t.
type Opener func(t *testing.T, dir string) frontier.Store

// Run runs every conformance scenario against the stores open returns, each
// as a subtest.
func Run(t *testing.T, open Opener) {
	t.Helper()
	scenarios := []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"StoreOrder", testStoreOrder},
		{"StoreScanBounds", testStoreScanBounds},
		{"StoreMutations", testStoreMutations},
		{"StoreOwnership", testStoreOwnership},
		{"StoreAtomicWrite", testStoreAtomicWrite},
		{"StoreDurable", testStoreDurable},
		{"FrontierOrder", testFrontierOrder},
		{"FrontierLeaseExpiry", testFrontierLeaseExpiry},
		{"FrontierReopen", testFrontierReopen},
		{"FrontierSettlements", testFrontierSettlements},
		{"FrontierConcurrent", testFrontierConcurrent},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) { s.fn(t, open) })
	}
}

var ctx = context.Background()

func openFresh(t *testing.T, open Opener) (frontier.Store, string) {
	t.Helper()
	dir := t.TempDir()
	s := open(t, dir)
	if s == nil {
		t.Fatal("open returned a nil Store")
	}
	return s, dir
}

func closeStore(t *testing.T, s frontier.Store) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func write(t *testing.T, s frontier.Store, muts ...frontier.Mutation) {
	t.Helper()
	if err := s.Write(ctx, muts); err != nil {
		t.Fatalf("Write: %v", err)
	}
}

func put(k, v string) frontier.Mutation {
	return frontier.Mutation{Key: []byte(k), Value: []byte(v)}
}

func del(k string) frontier.Mutation { return frontier.Mutation{Key: []byte(k), Delete: true} }

// scanAll reads [start, end) in pages of page pairs, checking order.
func scanAll(t *testing.T, s frontier.Store, start, end []byte, page int) []frontier.KV {
	t.Helper()
	var out []frontier.KV
	for {
		kvs, err := s.Scan(ctx, start, end, page)
		if err != nil {
			t.Fatalf("Scan(%q, %q, %d): %v", start, end, page, err)
		}
		if len(kvs) > page {
			t.Fatalf("Scan(%q, %q, %d) returned %d pairs, more than the limit", start, end, page, len(kvs))
		}
		for _, kv := range kvs {
			if bytes.Compare(kv.Key, start) < 0 || (end != nil && bytes.Compare(kv.Key, end) >= 0) {
				t.Fatalf("Scan(%q, %q) returned key %q outside the range", start, end, kv.Key)
			}
			if len(out) > 0 && bytes.Compare(out[len(out)-1].Key, kv.Key) >= 0 {
				t.Fatalf("Scan returned %q after %q: not in ascending order", kv.Key, out[len(out)-1].Key)
			}
			out = append(out, kv)
		}
		if len(kvs) < page {
			return out
		}
		start = append(bytes.Clone(kvs[len(kvs)-1].Key), 0)
	}
}

func randomKeys(r *rand.Rand, n int) map[string]string {
	m := make(map[string]string, n)
	for len(m) < n {
		k := make([]byte, 1+r.IntN(12))
		for i := range k {
			// Bias toward the edges of the byte range and shared prefixes.
			switch r.IntN(4) {
			case 0:
				k[i] = 0x00
			case 1:
				k[i] = 0xff
			default:
				k[i] = byte('a' + r.IntN(3))
			}
		}
		m[string(k)] = fmt.Sprintf("v%d", r.IntN(1000))
	}
	return m
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func checkContents(t *testing.T, s frontier.Store, want map[string]string) {
	t.Helper()
	got := scanAll(t, s, nil, nil, 7)
	keys := sortedKeys(want)
	if len(got) != len(keys) {
		t.Fatalf("store holds %d keys, want %d", len(got), len(keys))
	}
	for i, kv := range got {
		if string(kv.Key) != keys[i] || string(kv.Value) != want[keys[i]] {
			t.Fatalf("pair %d is %q=%q, want %q=%q", i, kv.Key, kv.Value, keys[i], want[keys[i]])
		}
	}
}

func testStoreOrder(t *testing.T, open Opener) {
	s, _ := openFresh(t, open)
	defer closeStore(t, s)
	r := rand.New(rand.NewPCG(1, 2))
	want := randomKeys(r, 500)
	keys := sortedKeys(want)
	r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	for i := 0; i < len(keys); i += 37 {
		var muts []frontier.Mutation
		for _, k := range keys[i:min(i+37, len(keys))] {
			muts = append(muts, put(k, want[k]))
		}
		write(t, s, muts...)
	}
	checkContents(t, s, want)
}

func testStoreScanBounds(t *testing.T, open Opener) {
	s, _ := openFresh(t, open)
	defer closeStore(t, s)
	keys := []string{"a", "a\x00", "a\x00\x00", "a\x01", "ab", "b", "b\xff", "c"}
	var muts []frontier.Mutation
	for _, k := range keys {
		muts = append(muts, put(k, "v"+k))
	}
	write(t, s, muts...)
	cases := []struct {
		start, end string
		noEnd      bool
		limit      int
		want       []string
	}{
		{start: "", noEnd: true, limit: 100, want: keys},
		{start: "a\x00", end: "a\x01", limit: 100, want: []string{"a\x00", "a\x00\x00"}},
		{start: "a\x00\x00", end: "b", limit: 2, want: []string{"a\x00\x00", "a\x01"}},
		{start: "a", end: "a", limit: 10, want: nil},
		{start: "b", end: "a", limit: 10, want: nil},
		{start: "b\x00", noEnd: true, limit: 10, want: []string{"b\xff", "c"}},
		{start: "c\x00", noEnd: true, limit: 10, want: nil},
		{start: "", end: "a\x00", limit: 1, want: []string{"a"}},
	}
	for _, c := range cases {
		var end []byte
		if !c.noEnd {
			end = []byte(c.end)
		}
		kvs, err := s.Scan(ctx, []byte(c.start), end, c.limit)
		if err != nil {
			t.Fatalf("Scan(%q, %q, %d): %v", c.start, c.end, c.limit, err)
		}
		var got []string
		for _, kv := range kvs {
			got = append(got, string(kv.Key))
			if string(kv.Value) != "v"+string(kv.Key) {
				t.Errorf("value of %q is %q", kv.Key, kv.Value)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Scan(%q, %q (none: %v), %d) = %q, want %q", c.start, c.end, c.noEnd, c.limit, got, c.want)
		}
	}
}

func testStoreMutations(t *testing.T, open Opener) {
	s, _ := openFresh(t, open)
	defer closeStore(t, s)
	write(t, s, put("k1", "a"), put("k2", "b"), put("k1", "c"))
	write(t, s, del("absent"))
	write(t, s, put("k3", "d"), del("k3"), del("k2"), put("k2", "e"))
	write(t, s, put("k4", ""))
	write(t, s)
	checkContents(t, s, map[string]string{"k1": "c", "k2": "e", "k4": ""})
	write(t, s, del("k1"), del("k2"), del("k4"))
	checkContents(t, s, map[string]string{})
}

func testStoreOwnership(t *testing.T, open Opener) {
	s, _ := openFresh(t, open)
	defer closeStore(t, s)
	k, v := []byte("key"), []byte("value")
	write(t, s, frontier.Mutation{Key: k, Value: v})
	k[0], v[0] = 'X', 'X' // the store must have copied them
	kvs, err := s.Scan(ctx, nil, nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(kvs) != 1 || string(kvs[0].Key) != "key" || string(kvs[0].Value) != "value" {
		t.Fatalf("after mutating the written slices the store holds %q", kvs)
	}
	kvs[0].Key[0], kvs[0].Value[0] = 'Y', 'Y' // the caller owns scanned slices
	checkContents(t, s, map[string]string{"key": "value"})
}

func testStoreAtomicWrite(t *testing.T, open Opener) {
	s, _ := openFresh(t, open)
	defer closeStore(t, s)
	checkAtomicWrite(t, s, 200)
}

// atomicBatch is the number of keys of each batch checkAtomicWrite writes.
const atomicBatch = 8

// atomicKey is key j of batch i.
func atomicKey(i, j int) []byte { return fmt.Appendf(nil, "x%04d/%d", i, j) }

// checkAtomicWrite writes batches on the empty store s, each putting the
// keys of its batch and deleting those of the one before, while two
// readers scan. Every Scan must see exactly one whole batch (none before
// the first Write), never an older one than the last whose Write had
// returned when the Scan began. The readers scan for as long as the writer
// writes, and the writer starts a batch only once a Scan begun after the
// previous Write has returned: a store whose Write shows a partial batch
// for as long as one Scan takes is caught, however fast or slow the store.
func checkAtomicWrite(t testing.TB, s frontier.Store, batches int) {
	t.Helper()
	var (
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		written int   // batches whose Write returned
		scanned = -1  // the largest written at the start of a finished Scan
		done    bool  // the writer is done
		failure error // the first failure; ends the writer and the readers
	)
	fail := func(err error) {
		mu.Lock()
		if failure == nil {
			failure = err
		}
		cond.Broadcast()
		mu.Unlock()
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() {
			mu.Lock()
			done = true
			cond.Broadcast()
			mu.Unlock()
		}()
		for i := 0; i < batches; i++ {
			var muts []frontier.Mutation
			for j := 0; j < atomicBatch; j++ {
				muts = append(muts, frontier.Mutation{Key: atomicKey(i, j), Value: []byte("v")})
				if i > 0 {
					muts = append(muts, frontier.Mutation{Key: atomicKey(i-1, j), Delete: true})
				}
			}
			if err := s.Write(ctx, muts); err != nil {
				fail(fmt.Errorf("Write of batch %d: %w", i, err))
				return
			}
			mu.Lock()
			written = i + 1
			for scanned < written && failure == nil {
				cond.Wait()
			}
			stop := failure != nil
			mu.Unlock()
			if stop {
				return
			}
		}
	}()
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				start, last := written, done
				stop := failure != nil
				mu.Unlock()
				if stop {
					return
				}
				kvs, err := s.Scan(ctx, []byte("x"), []byte("y"), 4*atomicBatch)
				if err != nil {
					fail(fmt.Errorf("Scan: %w", err))
					return
				}
				if err := checkAtomicScan(kvs, start); err != nil {
					fail(err)
					return
				}
				mu.Lock()
				if start > scanned {
					scanned = start
					cond.Broadcast()
				}
				mu.Unlock()
				if last {
					return
				}
			}
		}()
	}
	wg.Wait()
	if failure != nil {
		t.Fatal(failure)
	}
	kvs, err := s.Scan(ctx, []byte("x"), []byte("y"), 4*atomicBatch)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	if err := checkAtomicScan(kvs, batches); err != nil {
		t.Fatalf("after the last Write: %v", err)
	}
}

// checkAtomicScan checks what a Scan begun after written batches had been
// written returned.
func checkAtomicScan(kvs []frontier.KV, written int) error {
	if len(kvs) == 0 {
		if written > 0 {
			return fmt.Errorf("a Scan begun after %d Writes had returned found none of their keys", written)
		}
		return nil
	}
	batch := string(kvs[0].Key[:5])
	for _, kv := range kvs {
		if string(kv.Key[:5]) != batch {
			return fmt.Errorf("a Scan saw keys of batches %s and %s: the Write that deleted one and put the other is not atomic", batch, kv.Key[:5])
		}
	}
	if len(kvs) != atomicBatch {
		return fmt.Errorf("a Scan saw %d of the %d keys of batch %s: Write is not atomic", len(kvs), atomicBatch, batch)
	}
	if want := string(atomicKey(written-1, 0)[:5]); written > 0 && batch < want {
		return fmt.Errorf("a Scan begun after the Write of batch %s returned saw batch %s", want, batch)
	}
	return nil
}

func testStoreDurable(t *testing.T, open Opener) {
	s, dir := openFresh(t, open)
	r := rand.New(rand.NewPCG(3, 4))
	want := randomKeys(r, 200)
	var muts []frontier.Mutation
	for k, v := range want {
		muts = append(muts, put(k, v))
	}
	write(t, s, muts...)
	for _, k := range sortedKeys(want)[:50] {
		write(t, s, del(k))
		delete(want, k)
	}
	closeStore(t, s)
	s = open(t, dir)
	checkContents(t, s, want)
	closeStore(t, s)

	other, _ := openFresh(t, open)
	defer closeStore(t, other)
	checkContents(t, other, map[string]string{})
}

// clock is the scenarios' fake time.
var epoch = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func newFrontier(t *testing.T, s frontier.Store, opts frontier.Config) *frontier.Frontier {
	t.Helper()
	opts.Store = s
	if opts.Politeness == nil {
		opts.Politeness = frontier.FixedDelay(0)
	}
	opts.Now = func() time.Time { t.Error("a scenario read the wall clock"); return epoch }
	f, err := frontier.New(opts)
	if err != nil {
		t.Fatalf("frontier.New: %v", err)
	}
	return f
}

// drain leases and settles with success everything leasable by at, and
// returns the URLs in lease order.
func drain(t *testing.T, f *frontier.Frontier, at time.Time) []*frontier.Lease {
	t.Helper()
	var out []*frontier.Lease
	for {
		l, _, err := f.NextAt(at)
		if err != nil {
			t.Fatalf("NextAt: %v", err)
		}
		if l == nil {
			return out
		}
		out = append(out, l)
		s, err := f.DoneAt(at, l, frontier.Success(0))
		if err != nil {
			t.Fatalf("DoneAt(%s): %v", l.URL, err)
		}
		if want := (frontier.Settlement{Kind: frontier.SettlementFinished, Attempt: l.Attempt}); s != want {
			t.Fatalf("DoneAt(%s) = %+v, want %+v (no Schedule)", l.URL, s, want)
		}
	}
}

func testFrontierOrder(t *testing.T, open Opener) {
	s, dir := openFresh(t, open)
	band := frontier.PrioritizerFunc(func(e *frontier.Entry, bands int) int { return int(e.Priority) })
	opts := frontier.Config{Bands: 3, Window: 3, Prioritizer: band, Politeness: frontier.FixedDelay(time.Second)}
	f := newFrontier(t, s, opts)
	// One host, URLs added in several calls, bands interleaved.
	var want [3][]string
	for i := 0; i < 60; i++ {
		b := (i * 7) % 3
		u := fmt.Sprintf("http://one.test/%d", i)
		want[b] = append(want[b], u)
		if err := f.AddAt(epoch, frontier.Entry{URL: u, Host: "one.test", Priority: float64(b), Depth: i}); err != nil {
			t.Fatal(err)
		}
	}
	order := slices.Concat(want[0], want[1], want[2])
	var urls []string
	now := epoch
	// lease takes the next lease one second after the previous one; the
	// one-second politeness delay allows exactly one lease each time.
	lease := func() *frontier.Lease {
		t.Helper()
		now = now.Add(time.Second)
		l, _, err := f.NextAt(now)
		if err != nil {
			t.Fatal(err)
		}
		if l == nil {
			return nil
		}
		if l.Depth != depthOf(l.URL) {
			t.Fatalf("lease of %s has depth %d", l.URL, l.Depth)
		}
		if again, _, _ := f.NextAt(now); again != nil {
			t.Fatalf("host leased twice at one instant: %s and %s", l.URL, again.URL)
		}
		return l
	}
	// Half before a restart; the last lease is left unsettled and must
	// come back in its place.
	for i := 0; i < 25; i++ {
		l := lease()
		if l == nil {
			t.Fatalf("queue ran dry after %d leases", i)
		}
		if i == 24 {
			break
		}
		urls = append(urls, l.URL)
		if _, err := f.DoneAt(now, l, frontier.Success(0)); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	closeStore(t, s)

	s = open(t, dir)
	defer closeStore(t, s)
	f = newFrontier(t, s, opts)
	defer f.Close()
	for {
		l := lease()
		if l == nil {
			break
		}
		urls = append(urls, l.URL)
		if _, err := f.DoneAt(now, l, frontier.Success(0)); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(urls, order) {
		t.Fatalf("lease order:\n got %q\nwant %q", urls, order)
	}
}

func depthOf(u string) int {
	var d int
	fmt.Sscanf(u[len("http://one.test/"):], "%d", &d)
	return d
}

func testFrontierLeaseExpiry(t *testing.T, open Opener) {
	s, _ := openFresh(t, open)
	defer closeStore(t, s)
	f := newFrontier(t, s, frontier.Config{LeaseTTL: time.Minute})
	defer f.Close()
	if err := f.AddAt(epoch, frontier.Entry{URL: "http://a.test/x", Host: "a.test"}); err != nil {
		t.Fatal(err)
	}
	l1, _, err := f.NextAt(epoch)
	if err != nil || l1 == nil {
		t.Fatalf("NextAt = %v, %v", l1, err)
	}
	if l, _, _ := f.NextAt(epoch.Add(59 * time.Second)); l != nil {
		t.Fatalf("leased %s again before the lease expired", l.URL)
	}
	l2, _, err := f.NextAt(epoch.Add(time.Minute))
	if err != nil || l2 == nil || l2.URL != l1.URL {
		t.Fatalf("after expiry NextAt = %v, %v; want the same URL again", l2, err)
	}
	if _, err := f.DoneAt(epoch.Add(time.Minute), l1, frontier.Success(0)); !errors.Is(err, frontier.ErrLeaseExpired) {
		t.Fatalf("Done on the expired lease = %v, want ErrLeaseExpired", err)
	}
	if err := f.ExtendAt(epoch.Add(90*time.Second), l2, time.Minute); err != nil {
		t.Fatalf("Extend: %v", err)
	}
	if l, _, _ := f.NextAt(epoch.Add(140 * time.Second)); l != nil {
		t.Fatalf("an extended lease expired early: %s leased again", l.URL)
	}
	if _, err := f.DoneAt(epoch.Add(140*time.Second), l2, frontier.Success(0)); err != nil {
		t.Fatalf("Done on the extended lease: %v", err)
	}
	if _, err := f.DoneAt(epoch.Add(141*time.Second), l2, frontier.Success(0)); !errors.Is(err, frontier.ErrLeaseSettled) {
		t.Fatalf("second Done = %v, want ErrLeaseSettled", err)
	}
	if l, _, _ := f.NextAt(epoch.Add(time.Hour)); l != nil {
		t.Fatalf("settled URL %s came back", l.URL)
	}
}

func testFrontierReopen(t *testing.T, open Opener) {
	s, dir := openFresh(t, open)
	opts := frontier.Config{Window: 2, DelayedWindow: 3, MaxAttempts: 3}
	f := newFrontier(t, s, opts)
	const hosts, perHost = 7, 12
	var entries []frontier.Entry
	for h := 0; h < hosts; h++ {
		for i := 0; i < perHost; i++ {
			entries = append(entries, frontier.Entry{
				URL:  fmt.Sprintf("http://h%d.test/%d", h, i),
				Host: fmt.Sprintf("h%d.test", h), Depth: i % 4, Meta: []byte(fmt.Sprint("m", h, i)),
			})
		}
	}
	if err := f.AddAt(epoch, entries[:40]...); err != nil {
		t.Fatal(err)
	}
	if err := f.AddAt(epoch, entries[40:]...); err != nil {
		t.Fatal(err)
	}
	// Settle a mix, leave some leases unsettled.
	state := map[string]string{} // url -> "recrawl", "retry", "failed", "leased"
	now := epoch
	for i := 0; i < 30; i++ {
		l, _, err := f.NextAt(now)
		if err != nil || l == nil {
			t.Fatalf("NextAt #%d = %v, %v", i, l, err)
		}
		var o frontier.Outcome
		var want frontier.Settlement
		recrawl := frontier.Settlement{Kind: frontier.SettlementRecrawl, At: now.Add(time.Hour)}
		switch i % 4 {
		case 0:
			o, state[l.URL], want = frontier.Outcome{Kind: frontier.OutcomeSuccess, Fingerprint: uint64(i + 1), RecrawlAt: now.Add(time.Hour)}, "recrawl", recrawl
		case 1:
			o, state[l.URL] = frontier.Retry(time.Minute), "retry"
			want = frontier.Settlement{Kind: frontier.SettlementRetrying, At: now.Add(time.Minute), Attempt: 1}
		case 2:
			o, state[l.URL], want = frontier.Failed(), "failed", frontier.Settlement{Kind: frontier.SettlementFailed}
		case 3:
			if i < 12 { // at most three hosts kept busy by unsettled leases
				state[l.URL] = "leased"
				continue
			}
			o, state[l.URL], want = frontier.Outcome{Kind: frontier.OutcomeSuccess, Fingerprint: uint64(i + 1), RecrawlAt: now.Add(time.Hour)}, "recrawl", recrawl
		}
		got, err := f.DoneAt(now, l, o)
		if err != nil {
			t.Fatal(err)
		}
		checkSettlement(t, l.URL, got, want)
	}
	f.Close()
	closeStore(t, s)

	s = open(t, dir)
	defer closeStore(t, s)
	f = newFrontier(t, s, opts)
	defer f.Close()
	seen := map[string]*frontier.Lease{}
	later := func(at time.Time) {
		for _, l := range drain(t, f, at) {
			if seen[l.URL] != nil {
				t.Fatalf("%s leased twice after reopen", l.URL)
			}
			seen[l.URL] = l
		}
	}
	later(epoch)
	for _, e := range entries {
		st := state[e.URL]
		l := seen[e.URL]
		switch st {
		case "", "leased":
			if l == nil {
				t.Fatalf("%s (%s) lost across reopen", e.URL, orQueued(st))
			}
			if string(l.Meta) != string(e.Meta) || l.Host != e.Host || l.Depth != e.Depth {
				t.Fatalf("%s came back as meta %q host %q depth %d", e.URL, l.Meta, l.Host, l.Depth)
			}
		default:
			if l != nil {
				t.Fatalf("%s (%s) leased right after reopen", e.URL, st)
			}
		}
	}
	// A minute later the retries are due, an hour later the recrawls.
	later(epoch.Add(time.Minute))
	later(epoch.Add(2 * time.Hour))
	for _, e := range entries {
		st, l := state[e.URL], seen[e.URL]
		switch st {
		case "retry":
			if l == nil || l.Attempt != 1 {
				t.Fatalf("retried %s came back as %+v, want attempt 1", e.URL, l)
			}
		case "recrawl":
			if l == nil || l.Fingerprint == 0 || l.Interval != time.Hour || string(l.Meta) != string(e.Meta) {
				t.Fatalf("recrawl of %s came back as %+v", e.URL, l)
			}
		case "failed":
			if l != nil {
				t.Fatalf("failed %s came back", e.URL)
			}
		}
	}
}

// checkSettlement fails t unless got is want; times compare as instants.
func checkSettlement(t *testing.T, url string, got, want frontier.Settlement) {
	t.Helper()
	if got.Kind != want.Kind || !got.At.Equal(want.At) || got.Attempt != want.Attempt {
		t.Fatalf("Done(%s) = %v at %v attempt %d, want %v at %v attempt %d",
			url, got.Kind, got.At, got.Attempt, want.Kind, want.At, want.Attempt)
	}
}

// testFrontierSettlements checks what DoneAt reports on a stored frontier:
// a retry is due after its backoff and is given up at MaxAttempts, counting
// the attempts made before a reopen; a success is recrawled when the
// Schedule or Outcome.RecrawlAt says; a failure is final.
func testFrontierSettlements(t *testing.T, open Opener) {
	s, dir := openFresh(t, open)
	opts := frontier.Config{MaxAttempts: 3, RetryBase: 10 * time.Second, RetryMax: 15 * time.Second,
		Schedule: frontier.FixedInterval(time.Hour)}
	f := newFrontier(t, s, opts)
	urls := []string{"http://retry.test/", "http://sched.test/", "http://at.test/", "http://fail.test/"}
	for _, u := range urls {
		if err := f.AddAt(epoch, frontier.Entry{URL: u}); err != nil {
			t.Fatal(err)
		}
	}
	leaseOf := func(f *frontier.Frontier, now time.Time, url string) *frontier.Lease {
		t.Helper()
		l, _, err := f.NextAt(now)
		if err != nil || l == nil || l.URL != url {
			t.Fatalf("NextAt(%v) = %+v, %v; want a lease of %s", now.Sub(epoch), l, err, url)
		}
		return l
	}
	byURL := map[string]*frontier.Lease{}
	for range urls {
		l, _, err := f.NextAt(epoch)
		if err != nil || l == nil {
			t.Fatalf("NextAt = %v, %v", l, err)
		}
		byURL[l.URL] = l
	}
	at := epoch.Add(5 * time.Minute)
	for _, c := range []struct {
		url  string
		o    frontier.Outcome
		want frontier.Settlement
	}{
		{urls[0], frontier.Retry(0), frontier.Settlement{Kind: frontier.SettlementRetrying, At: epoch.Add(10 * time.Second), Attempt: 1}},
		{urls[1], frontier.Success(7), frontier.Settlement{Kind: frontier.SettlementRecrawl, At: epoch.Add(time.Hour)}},
		{urls[2], frontier.Outcome{Kind: frontier.OutcomeSuccess, RecrawlAt: at}, frontier.Settlement{Kind: frontier.SettlementRecrawl, At: at}},
		{urls[3], frontier.Failed(), frontier.Settlement{Kind: frontier.SettlementFailed}},
	} {
		got, err := f.DoneAt(epoch, byURL[c.url], c.o)
		if err != nil {
			t.Fatalf("DoneAt(%s): %v", c.url, err)
		}
		checkSettlement(t, c.url, got, c.want)
	}
	f.Close()
	closeStore(t, s)

	s = open(t, dir)
	defer closeStore(t, s)
	f = newFrontier(t, s, opts)
	defer f.Close()
	// The second retry waits 20 s capped at RetryMax; the third attempt
	// is the last MaxAttempts allows.
	now := epoch.Add(10 * time.Second)
	got, err := f.DoneAt(now, leaseOf(f, now, urls[0]), frontier.Retry(0))
	if err != nil {
		t.Fatal(err)
	}
	checkSettlement(t, urls[0], got, frontier.Settlement{Kind: frontier.SettlementRetrying, At: now.Add(15 * time.Second), Attempt: 2})
	now = now.Add(15 * time.Second)
	got, err = f.DoneAt(now, leaseOf(f, now, urls[0]), frontier.Retry(0))
	if err != nil {
		t.Fatal(err)
	}
	checkSettlement(t, urls[0], got, frontier.Settlement{Kind: frontier.SettlementGivenUp, Attempt: 3})
	// The recrawls come back when they said; the failed and the given-up
	// URLs never do.
	got, err = f.DoneAt(at, leaseOf(f, at, urls[2]), frontier.NotModified())
	if err != nil {
		t.Fatal(err)
	}
	checkSettlement(t, urls[2], got, frontier.Settlement{Kind: frontier.SettlementRecrawl, At: at.Add(time.Hour)})
	later := epoch.Add(time.Hour)
	got, err = f.DoneAt(later, leaseOf(f, later, urls[1]), frontier.Success(7))
	if err != nil {
		t.Fatal(err)
	}
	checkSettlement(t, urls[1], got, frontier.Settlement{Kind: frontier.SettlementRecrawl, At: later.Add(time.Hour)})
	if l, wake, err := f.NextAt(later); err != nil || l != nil || !wake.Equal(at.Add(time.Hour)) {
		t.Fatalf("NextAt after the settlements = %+v, %v, %v; want nothing until %v", l, wake, err, at.Add(time.Hour))
	}
}

func orQueued(s string) string {
	if s == "" {
		return "queued"
	}
	return s
}

func testFrontierConcurrent(t *testing.T, open Opener) {
	s, _ := openFresh(t, open)
	defer closeStore(t, s)
	f := newFrontier(t, s, frontier.Config{Window: 4, MaxLeasesPerHost: 2})
	defer f.Close()
	const adders, perAdder, workers = 4, 150, 6
	const total = adders * perAdder
	var (
		mu      sync.Mutex
		settled = map[string]int{}
		count   atomic.Int64
		stop    atomic.Bool
		wg      sync.WaitGroup
		errs    = make(chan error, adders+workers)
	)
	fail := func(err error) {
		stop.Store(true)
		errs <- err
	}
	for a := 0; a < adders; a++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perAdder; i += 5 {
				var es []frontier.Entry
				for j := i; j < i+5; j++ {
					es = append(es, frontier.Entry{URL: fmt.Sprintf("http://h%d.test/%d/%d", j%9, a, j), Host: fmt.Sprintf("h%d.test", j%9)})
				}
				if err := f.AddAt(epoch, es...); err != nil {
					fail(err)
					return
				}
			}
		}()
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			idle := 0
			for !stop.Load() && count.Load() < total {
				l, _, err := f.NextAt(epoch)
				if err != nil {
					fail(err)
					return
				}
				if l == nil {
					if idle++; idle > 10_000_000 {
						fail(fmt.Errorf("nothing leasable with %d of %d URLs settled: URLs lost", count.Load(), total))
						return
					}
					runtime.Gosched()
					continue
				}
				idle = 0
				if _, err := f.DoneAt(epoch, l, frontier.Success(0)); err != nil {
					fail(fmt.Errorf("Done(%s): %w", l.URL, err))
					return
				}
				mu.Lock()
				settled[l.URL]++
				mu.Unlock()
				count.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(settled) != total {
		t.Fatalf("%d URLs settled, want %d", len(settled), total)
	}
	for u, c := range settled {
		if c != 1 {
			t.Fatalf("%s settled %d times", u, c)
		}
	}
	if l, _, _ := f.NextAt(epoch.Add(time.Hour)); l != nil {
		t.Fatalf("%s still queued after every URL settled", l.URL)
	}
}
