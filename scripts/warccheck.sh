#!/bin/sh
# warccheck.sh checks crawlkit's WARC output with an independent reader,
# warcio.js (npm warcio@2.4.11): it crawls the synthetic web (crawltest, on
# loopback) with the quickstart, then runs scripts/warccheck.mjs on the
# files, which parses every record with warcio, recomputes every block and
# payload digest, and compares the CDXJ index beside each file with
# `warcio cdx-index`. It also runs the warc package's warcio test, which
# covers content-encoded, truncated and revisit records the synthetic web
# does not serve. warcio.js has no `check` command (Python warcio's);
# warccheck.mjs does its digest checks.
#
# Usage: scripts/warccheck.sh [hosts [pages-per-host]]
# WARCIO_DIR, if set, is an existing `npm install warcio@2.4.11` directory.
set -eu
cd "$(dirname "$0")/.."
hosts=${1:-20}
pages=${2:-25}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ -z "${WARCIO_DIR:-}" ]; then
	WARCIO_DIR=$work/warcio
	mkdir -p "$WARCIO_DIR"
	(cd "$WARCIO_DIR" && npm install --silent --no-audit --no-fund warcio@2.4.11 >/dev/null)
fi
export WARCIO_DIR

go run ./examples/quickstart -data-dir "$work/data" -web-hosts "$hosts" -web-pages "$pages" -delay 1ms >"$work/crawl.log"
tail -n 1 "$work/crawl.log"
node scripts/warccheck.mjs "$WARCIO_DIR" "$work"/data/warc/*.warc.gz
go test -count=1 -run TestWarcioReadsRecords ./archive/warc/
