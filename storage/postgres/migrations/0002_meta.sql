-- crawlkit storage/postgres schema, version 2.

-- meta records facts about the schema's data, one row per name:
--   fingerprint_version  the simhash.Version of the rows of fingerprints.
-- A schema without the row holds fingerprints of version 1 (written before
-- versions were recorded), if any. Open checks it and empties fingerprints
-- when it differs from the package's simhash.Version.
CREATE TABLE meta (
    name  text PRIMARY KEY,
    value bigint NOT NULL
);
