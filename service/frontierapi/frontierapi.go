// Package frontierapi runs a crawl frontier as an HTTP service that workers
// written in any language can drive, and is the Go client of that service.
//
// A Server owns one frontier.Frontier over any frontier.Store (in memory,
// storage/pebble for a durable single node, or a shared PostgreSQL or Redis
// store). In front of it sit URL normalization (urlnorm), a seen set
// (bloom), an optional spider-trap detector (trap) and an optional robots.txt
// cache (robots); behind it, a bounded History of fetches for the dashboard
// (package dashboard), whose Source and Analyzer the Server provides.
//
// # Layout
//
// The service is a package, service/frontierapi, and the command that runs it is
// examples/frontierd. As a package it can be mounted in a program that
// already has an HTTP server (next to its own health checks, or the crawler's
// stats address) and tested in-process with net/http/httptest; the command
// is a thin main over it: flags, a Pebble store, signals, the dashboard on
// its own listener. The Go client lives in this package rather than a
// subpackage so that the wire types (SubmitRequest, NextResponse, …) have one
// definition both ends share and cannot drift apart; a worker that imports
// it for Client links the server code too, which Go's linker drops when
// unused.
//
// # Authentication and limits
//
// Every endpoint requires "Authorization: Bearer <token>". The token is
// compared in constant time (both sides are hashed with SHA-256 first, so the
// comparison does not even leak the token's length). A missing or wrong token
// gets 401 with a WWW-Authenticate header (RFC 6750 §3). Bodies are limited to
// Config.MaxBodyBytes (413 body_too_large), submissions and results to
// Config.MaxURLs entries (413 too_many_urls), batch_size to 1000 and
// timeout_ms to Config.MaxWait.
//
// Every error answers with a JSON body whose "error" member is a stable
// code (the Code constants) and whose "message" explains it:
//
//	HTTP/1.1 400 Bad Request
//	{"error":"invalid_parameter","message":"batch_size \"5000\": want an integer from 1 to 1000"}
//
// Client mistakes are 4xx; 503 means the service is shutting down
// (unavailable) or its store refused a write (store_failed), and the request
// may be repeated. A mistake in one URL of a submission (a negative
// priority, say) rejects that URL only, in its entry of the 202 answer.
//
// # Host check
//
// Every request must name the service in its Host header, and in its Origin
// header when it has one, or it gets 403 forbidden_host before its token is
// looked at: the address it came in on (on a loopback address also
// localhost, 127.0.0.1 or [::1], with the port), or one of
// Config.AllowedHosts. A web page that a person on the machine visits
// therefore cannot reach a loopback service by DNS rebinding. Workers that
// reach the service by a name (crawler.internal:8080) or through a proxy
// need that name in Config.AllowedHosts.
//
// Each endpoint accepts the one method shown below; another method gets 405
// method_not_allowed with an Allow header. GET /api/v1/stats also answers
// HEAD; GET /api/v1/frontier/next does not, since it leases URLs that a
// HEAD response would never deliver.
//
// # Durability
//
// A submission answers 202 only after its accepted URLs were written to the
// frontier's Store (with storage/pebble, a synced batch), so a service killed
// at any moment loses nothing it acknowledged. A result is acknowledged after
// the settlement is written. Leases live in memory: after a restart every URL
// that was leased but not settled is queued again, and a late result for it
// gets "unknown_lease".
//
// # POST /api/v1/frontier/urls
//
// Submits a batch. Each URL is normalized (urlnorm.Crawler() by default),
// checked against the seen set, judged by the trap detector, and queued.
// discovered_at is RFC 3339.
//
//	POST /api/v1/frontier/urls
//	Authorization: Bearer s3cret
//
//	{"crawl_id":"news-2026-11",
//	 "urls":[{"url":"https://Example.com/a?utm_source=x","priority":0.5,"depth":1,
//	          "source_url":"https://example.com/","discovered_at":"2026-11-21T10:00:00Z"},
//	         {"url":"https://example.com/a"},
//	         {"url":"ftp://example.com/file"}]}
//
//	HTTP/1.1 202 Accepted
//	{"accepted":1,"rejected":1,"duplicates":1,
//	 "results":[{"normalized":"https://example.com/a","status":"accepted"},
//	            {"normalized":"https://example.com/a","status":"duplicate"},
//	            {"status":"rejected","reason":"unsupported_scheme: urlnorm: unsupported scheme \"ftp\""}]}
//
// # GET /api/v1/frontier/next
//
// Leases up to batch_size (1–1000, default 10) URLs whose hosts' politeness
// delay has run out, waiting up to timeout_ms (default 0) for the first
// one; it answers as soon as at least one URL is ready. worker_id is
// required. With a robots.txt cache the service checks every URL before
// handing it out: disallowed URLs are settled as failed and never handed
// out, and each URL carries the decision (with the deciding rule) and the
// host's Crawl-delay, by which the service already spaces the host's leases.
// While a host's robots.txt is unreachable its URLs are not handed out: the
// host is blocked until the cache fetches the file again, and the URLs are
// queued again without counting an attempt, since none was fetched. Once
// the file has been unreachable for longer than the cache's
// UnreachableLimit, the cache's Fallback decides as if the file were
// there: the URLs it disallows are settled as failed.
// The lease expires at lease_expires_at (Frontier.LeaseTTL, default 5
// minutes); its unsettled URLs are then queued again.
//
//	GET /api/v1/frontier/next?worker_id=w1&batch_size=2&timeout_ms=30000
//
//	HTTP/1.1 200 OK
//	{"lease_id":"9f0c4e2a51b7d3e8a6f1c0b2d4e6f8a1","lease_expires_at":"2026-11-21T10:05:00Z",
//	 "urls":[{"url":"https://example.com/a","host":"example.com","ip":"93.184.215.14","depth":1,
//	          "priority":0.5,"attempt":0,"source_url":"https://example.com/","crawl_id":"news-2026-11",
//	          "discovered_at":"2026-11-21T10:00:00Z",
//	          "robots":{"allowed":true,"reason":"rule","rule":"Allow: /a (line 4)"},"crawl_delay_ms":2000}]}
//
// Nothing ready within timeout_ms:
//
//	{"urls":[]}
//
// # POST /api/v1/frontier/results
//
// Settles URLs of a lease, all at once or in several requests. status is
// "success" or "error". A success with http_status 304 is "not modified";
// simhash (16 hex digits) or else content_hash tells the frontier's recrawl
// Schedule whether the content changed. An error is retried later (with
// exponential backoff, at least retry_after seconds) when it is transient:
// error_kind "network" or "timeout", 408, 425, 429 or 5xx; other 4xx fail
// the URL for good. A 429 or 503 with retry_after also keeps the whole host
// waiting that long (at most 30 days), from before the result is settled
// and even if it is not: a throttled fetch may outlast its lease, so the
// host is blocked as well when the result is skipped as already_settled or
// lease_expired, and when the lease_id is unknown because the lease ended a
// short while ago: within the lease duration (Frontier.LeaseTTL, default 5
// minutes) after it expired, or after its last URL was settled if that came
// first. The service remembers at most 10,000 ended lease_ids with 100,000
// URLs in all for this, the oldest forgotten first (about 10 MB at most).
// Only a URL that was handed out under the lease_id blocks anything, and it
// blocks the host it was leased for: a result for a URL not in the lease
// (not_in_lease), with a lease_id that was never issued or ended longer ago,
// after a restart, or with another worker_id than the lease's blocks
// nothing, so that the token alone does not let a caller stop the crawl of
// any host.
//
//	POST /api/v1/frontier/results
//
//	{"lease_id":"9f0c4e2a51b7d3e8a6f1c0b2d4e6f8a1","worker_id":"w1",
//	 "results":[{"url":"https://example.com/a","status":"success","http_status":200,
//	             "content_hash":"sha256:2c26b46b…","simhash":"8f3a5c0912e4b7d6","links_found":42,
//	             "duplicate":false,"duration_ms":180,"bytes":18324},
//	            {"url":"https://example.com/b","status":"error","http_status":503,"retry_after":120}]}
//
//	HTTP/1.1 200 OK
//	{"processed":2,"retries_scheduled":1,
//	 "results":[{"url":"https://example.com/a","outcome":"done"},
//	            {"url":"https://example.com/b","outcome":"retry","due_at":"2026-11-21T10:07:00Z"}]}
//
// due_at is when the URL is queued again: a retry's time, or a done URL's
// recrawl time; a retry on the last attempt the frontier allows is
// "failed", without due_at.
//
// A result for a URL that is not in the lease, or whose lease expired, is
// skipped ("outcome":"skipped" with "error" not_in_lease, lease_expired or
// already_settled: a second result for a URL of the lease, in the same
// request or a later one, is already_settled); an unknown lease_id answers
// 404 unknown_lease, and so does a lease_id all of whose URLs were settled.
//
// # GET /api/v1/stats
//
// The crawl's figures: the dashboard.Snapshot fields (urls, throughput in
// pages per second, hosts, workers, queue_by_band, errors by category,
// top_hosts, blocked_hosts, worker_list) plus leased, started and the
// frontier's own counters.
//
//	GET /api/v1/stats
//
//	HTTP/1.1 200 OK
//	{"time":"2026-11-21T10:01:00Z",
//	 "urls":{"discovered":1200,"queued":950,"fetched":240,"successful":231,"failed":4,"retried":5,
//	         "duplicate_content":3,"blocked_by_robots":7,"rejected_as_traps":12,"out_of_scope":0},
//	 "throughput":{"current":4.2,"average":4,"peak":6.1},
//	 "hosts":{"discovered":40,"active":6,"blocked":1},"workers":{"active":2,"idle":0},"bytes":4390012,
//	 "queue_by_band":[12,310,628,0],
//	 "errors":{"network":1,"timeout":2,"http_4xx":4,"http_5xx":5,"robots":7,"trap":12},
//	 "top_hosts":[…],"blocked_hosts":[…],"worker_list":[…],
//	 "leased":6,"started":"2026-11-21T10:00:00Z","frontier":{"hosts":40,"in_memory":950,…}}
//
// The per-band queue figures count the URLs this process queued plus, with a
// Store, the queued (not the delayed) URLs found in the store at startup.
package frontierapi
