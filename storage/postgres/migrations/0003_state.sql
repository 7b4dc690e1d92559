-- crawlkit storage/postgres schema, version 3.

-- state holds crawl state records that the processes of a crawl share,
-- one row per name (for example the spider-trap detector's learning,
-- crawlkit.StateStore): a process replaces a row in a transaction that
-- holds its lock, so no update is lost.
CREATE TABLE state (
    name       text PRIMARY KEY,
    value      bytea NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
