-- crawlkit storage/postgres schema, version 1.
--
-- Every object lives in the schema the DB was opened on (the connection's
-- search_path), so one database holds any number of independent crawls.

CREATE SEQUENCE url_seq;
CREATE SEQUENCE lease_seq;

-- urls is the URL database: one row per URL ever queued, keyed by the
-- 64-bit urlnorm.Key of the normalized URL. Rows are never deleted: a
-- finished URL keeps its row so that a later Add of it is dropped.
CREATE TABLE urls (
    url_hash          bigint PRIMARY KEY,        -- urlnorm.Key(url) as a signed integer
    url               text NOT NULL,             -- normalized URL
    host              text NOT NULL,             -- urlnorm.Host value
    host_hash         bigint NOT NULL,           -- urlnorm.HostKey(host)
    depth             integer NOT NULL,          -- links from a seed
    source            text NOT NULL,             -- 'seed' (depth 0) or 'link'
    discovered_at     timestamptz NOT NULL,
    priority          double precision NOT NULL, -- Entry.Priority
    band              smallint NOT NULL,         -- Prioritizer band; lower first
    seq               bigint NOT NULL,           -- Add order: (nextval('url_seq') << 16) + position in the batch
    meta              bytea,                     -- Entry.Meta
    state             smallint NOT NULL,         -- 0 queued, 1 leased, 2 done, 3 failed
    -- queued: when the URL is due; leased: when the lease expires;
    -- done or failed: NULL.
    next_fetch_at     timestamptz,
    attempts          integer NOT NULL DEFAULT 0,  -- fetches that ended in a retry
    lease_id          bigint,
    lease_expires     timestamptz,
    settled_lease     bigint,                      -- the lease that settled the row last
    recrawl_interval  bigint NOT NULL DEFAULT 0,   -- microseconds
    last_fetched_at   timestamptz,
    fetch_count       integer NOT NULL DEFAULT 0,
    last_status_code  integer,                     -- written by Queue.Record
    last_content_hash bigint,                      -- written by Queue.Record
    last_simhash      bigint                       -- Outcome.Fingerprint of the last success
);

-- A host's unsettled URLs in lease order, and by due time.
CREATE INDEX urls_host_order ON urls (host, band, seq) WHERE state IN (0, 1);
CREATE INDEX urls_host_due ON urls (host, next_fetch_at) WHERE state IN (0, 1);

-- hosts holds the shared politeness state. A host may be leased when
-- ready_at has passed; due_at is NULL exactly when the host has no unsettled
-- URL, and otherwise a lower bound of their next_fetch_at.
CREATE TABLE hosts (
    host          text PRIMARY KEY,
    host_hash     bigint NOT NULL,
    polite_at     timestamptz NOT NULL DEFAULT '-infinity', -- politeness: next contact
    blocked_until timestamptz NOT NULL DEFAULT '-infinity', -- BlockHost
    due_at        timestamptz,
    ready_at      timestamptz GENERATED ALWAYS AS (greatest(polite_at, blocked_until, due_at)) STORED,
    -- The pause after a lease that expires unsettled (its worker died), from
    -- the politeness delay seen when the host was last settled.
    expiry_delay  interval NOT NULL DEFAULT '1 second',
    lease_id      bigint,
    lease_expires timestamptz
);

CREATE INDEX hosts_ready ON hosts (ready_at) WHERE due_at IS NOT NULL;

-- crawlkit_lease leases the best due URL of up to p_limit ready hosts, one
-- per host. The hosts are locked first (SKIP LOCKED, so concurrent callers
-- take different hosts) and the URLs are chosen by a second statement, whose
-- snapshot is taken after the locks are held: a URL added concurrently is
-- either visible to it or its Add waits for the host lock and lowers due_at
-- afterwards, so no URL is ever left behind a host marked idle.
CREATE FUNCTION crawlkit_lease(p_now timestamptz, p_limit integer, p_expires timestamptz)
RETURNS TABLE (o_lease_id bigint, o_url_hash bigint, o_url text, o_host text, o_depth integer,
               o_priority double precision, o_meta bytea, o_attempts integer, o_fingerprint bigint,
               o_interval bigint, o_expired boolean)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    v_hosts text[];
BEGIN
    SELECT array_agg(r.host) INTO v_hosts FROM (
        SELECT h.host FROM hosts h
        WHERE h.due_at IS NOT NULL AND h.ready_at <= p_now
        ORDER BY h.ready_at
        LIMIT p_limit
        FOR UPDATE SKIP LOCKED) r;
    IF v_hosts IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
    WITH pick AS (
        SELECT c.url_hash, c.state AS old_state, h.host, h.expiry_delay
        FROM hosts h
        CROSS JOIN LATERAL (
            SELECT u.url_hash, u.state FROM urls u
            WHERE u.host = h.host AND u.state IN (0, 1) AND u.next_fetch_at <= p_now
            ORDER BY u.band, u.seq
            LIMIT 1) c
        WHERE h.host = ANY (v_hosts)
    ), leased AS (
        UPDATE urls u
        SET state = 1, lease_id = nextval('lease_seq'), lease_expires = p_expires, next_fetch_at = p_expires
        FROM pick
        WHERE u.url_hash = pick.url_hash AND u.state IN (0, 1) AND u.next_fetch_at <= p_now
        RETURNING u.lease_id, u.url_hash, u.url, u.host, u.depth, u.priority, u.meta, u.attempts,
                  coalesce(u.last_simhash, 0) AS fingerprint, u.recrawl_interval,
                  pick.old_state = 1 AS expired, pick.expiry_delay
    ), took AS (
        UPDATE hosts h
        SET polite_at = p_expires + l.expiry_delay, lease_id = l.lease_id, lease_expires = p_expires
        FROM leased l
        WHERE h.host = l.host
    ), idle AS (
        UPDATE hosts h
        SET due_at = (SELECT min(u.next_fetch_at) FROM urls u WHERE u.host = h.host AND u.state IN (0, 1))
        WHERE h.host = ANY (v_hosts) AND NOT EXISTS (SELECT 1 FROM pick p WHERE p.host = h.host)
    )
    SELECT l.lease_id, l.url_hash, l.url, l.host, l.depth, l.priority, l.meta, l.attempts,
           l.fingerprint, l.recrawl_interval, l.expired
    FROM leased l;
END;
$$;

-- crawlkit_settle settles lease p_lease on URL p_url_hash. It returns 0 when
-- settled, 1 when the lease is no longer valid (it expired, perhaps was
-- leased again), 2 when this lease had already settled the URL. The host row
-- is locked before the URL row, in the same order as crawlkit_lease, and
-- due_at is recomputed by a statement that runs after the lock is held.
CREATE FUNCTION crawlkit_settle(p_now timestamptz, p_lease bigint, p_url_hash bigint, p_host text,
    p_state smallint, p_next timestamptz, p_attempts integer, p_fingerprint bigint, p_interval bigint,
    p_fetched boolean, p_polite timestamptz, p_delay interval)
RETURNS integer
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    v_settled bigint;
BEGIN
    PERFORM 1 FROM hosts WHERE host = p_host FOR UPDATE;
    UPDATE urls
    SET state = p_state, next_fetch_at = p_next, attempts = p_attempts,
        last_simhash = nullif(p_fingerprint, 0), recrawl_interval = p_interval,
        last_fetched_at = CASE WHEN p_fetched THEN p_now ELSE last_fetched_at END,
        fetch_count = fetch_count + CASE WHEN p_fetched THEN 1 ELSE 0 END,
        lease_id = NULL, lease_expires = NULL, settled_lease = p_lease
    WHERE url_hash = p_url_hash AND lease_id = p_lease AND state = 1 AND lease_expires > p_now;
    IF NOT FOUND THEN
        SELECT settled_lease INTO v_settled FROM urls WHERE url_hash = p_url_hash;
        IF v_settled = p_lease THEN
            RETURN 2;
        END IF;
        RETURN 1;
    END IF;
    UPDATE hosts
    SET polite_at = p_polite, expiry_delay = p_delay, lease_id = NULL, lease_expires = NULL,
        due_at = (SELECT min(u.next_fetch_at) FROM urls u WHERE u.host = p_host AND u.state IN (0, 1))
    WHERE host = p_host;
    RETURN 0;
END;
$$;

-- robots_cache keeps fetched robots.txt files per origin; record is
-- robots.Record's binary form, the other columns are for inspection.
CREATE TABLE robots_cache (
    origin     text PRIMARY KEY,
    status     integer NOT NULL,
    fetched_at timestamptz,
    expires    timestamptz,
    record     bytea NOT NULL
);

-- seen is the exact set behind a bloom.Set.
CREATE TABLE seen (
    key bigint PRIMARY KEY
);

-- fingerprints persists a simhash.Index.
CREATE TABLE fingerprints (
    fingerprint bigint NOT NULL,
    doc_id      bigint NOT NULL,
    PRIMARY KEY (fingerprint, doc_id)
);

-- frontier_kv is the ordered key-value store of a frontier.Frontier
-- (FrontierStore); bytea compares byte by byte, as the Store contract needs.
CREATE TABLE frontier_kv (
    k bytea PRIMARY KEY,
    v bytea NOT NULL
);
