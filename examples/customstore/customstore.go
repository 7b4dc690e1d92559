// Package customstore is a walk-through of writing a storage adapter for
// crawlkit and proving it with the conformance kits. It holds two small
// adapters that are complete and tested, meant to be read and copied:
//
//   - FileStore, a frontier.Store kept in one append-only file, so that a
//     Frontier survives restarts without a database;
//   - DedupQueue, a crawlkit.Queue made of a frontier.Frontier and a set of
//     URLs, the smallest Queue that satisfies Config.Queue's contract, with
//     the set kept in a second store so that it survives restarts too.
//
// # Step 1: read the contract
//
// Each component declares the small interface it consumes, with the rules an
// implementation must keep in its doc comment: frontier.Store (ordered
// byte-string keys, atomic and durable batches, Scans that see a batch
// entirely or not at all), bloom.Store, simhash.Store, robots.Store, and
// crawlkit.Queue (go doc github.com/crawlkit/crawlkit Queue). Read it first:
// "durable when Write returns" and "a Scan sees all or none of a concurrent
// Write" decide the design below.
//
// # Step 2: choose the layout
//
// FileStore keeps every key and value in memory, in a sorted slice, and
// appends each Write to a log file as one record:
//
//	length uint32 | crc32c(payload) uint32 | payload
//	payload: count uvarint, then per mutation: op byte (1 put, 0 delete),
//	         key length uvarint, key, and for a put value length uvarint, value
//
// Write appends the record and syncs the file before it touches memory, so
// an acknowledged batch survives kill -9; a crash in the middle of an append
// leaves a torn last record, which Open detects (short, or wrong checksum)
// and cuts off, so a batch is applied whole or not at all. Open also syncs
// the log's directory, so that a newly created log survives a machine crash.
// Memory is updated
// under a write lock that Scan shares, which makes batches atomic to
// readers. The log only grows; a real adapter would rewrite it (compact)
// when it holds much more than the live keys.
//
// A torn record must only ever be the last one: Open stops replaying at the
// first record it cannot read and drops everything after it. So when an
// append fails without a crash (a full disk, an I/O error), Write truncates
// the file back to the end of the last complete record before it returns the
// error, and the next record goes there. If even the truncation fails, the
// store refuses every later Write with ErrBroken until it is reopened.
//
// DedupQueue's seen set has to be as durable as its frontier: a durable
// frontier deletes a URL's keys when the URL is finished, so after a restart
// only the seen set knows it was crawled, and a set held only in memory
// would let a resumed crawl queue every finished URL again. The frontier's
// Store cannot hold the set (a Frontier owns its Store's whole key space),
// so DedupQueue keeps one key per URL in a store of its own, a second
// FileStore, and reads them back when it is made. It writes the frontier
// first and the seen store second: a crash between the two can make a URL
// be fetched twice after the restart, but never lost.
//
// # Step 3: prove it
//
// Run the component's kit in a test: frontiertest.Run opens the store
// repeatedly, closes and reopens it, and drives a real Frontier over it
// (order, windows, lease expiry, restarts, concurrency). See
// customstore_test.go:
//
//	frontiertest.Run(t, func(t *testing.T, dir string) frontier.Store {
//		s, err := customstore.OpenFileStore(filepath.Join(dir, "frontier.log"))
//		if err != nil {
//			t.Fatal(err)
//		}
//		return s
//	})
//
// A shared queue is proven the same way with queuetest.Run, whose Opener
// takes a dir and a queuetest.Config; it opens several handles on one dir
// and checks deduplication, politeness,
// leases, retries and the end-of-crawl signal across them.
//
// # Step 4: plug it in
//
//	s, err := customstore.OpenFileStore(filepath.Join(dir, "frontier.log"))
//	f, err := frontier.New(frontier.Config{Store: s}) // a durable frontier
//
//	seen, err := customstore.OpenFileStore(filepath.Join(dir, "seen.log"))
//	q, err := customstore.NewDedupQueue(frontier.Config{Store: s}, seen)
//	c, err := crawlkit.New(crawlkit.Config{Queue: q, ...}) // a durable Queue for the crawler
//
// (Use f or q, not both: two frontiers must not share a Store.) Close the
// queue or frontier before the stores it was made on.
//
// The backends that ship with crawlkit (storage/pebble, storage/postgres,
// storage/redis) pass the same kits.
package customstore
