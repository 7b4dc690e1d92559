#!/bin/sh
# waczreplay.sh checks that a crawl's WACZ replays in ReplayWeb.page, the
# reader web archivists use: it crawls the synthetic web (crawltest, on
# loopback) with the quickstart, packages the WARC files as WACZ
# (-wacz), and replays the first seed's page from it in headless Chromium
# (internal/tools/waczreplay), expecting the title crawltest gave it. A URL
# the archive lacks replays as "Archived Page Not Found" and fails.
#
# Needs npm (for `npm pack replaywebpage@2.5.3`, its prebuilt ui.js and
# sw.js) and Chromium (Debian: apt-get install chromium).
# Usage: scripts/waczreplay.sh
set -eu
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent replaywebpage@2.5.3 >/dev/null && tar xzf replaywebpage-2.5.3.tgz)
go run ./examples/quickstart -data-dir "$work/data" -web-hosts 5 -web-pages 10 -delay 1ms -wacz "$work/crawl.wacz" >"$work/crawl.log"
tail -n 1 "$work/crawl.log"
go run ./internal/tools/waczreplay -ui "$work/package" -wacz "$work/crawl.wacz" \
	-url http://h0000.test/ -want "Welcome to h0000.test"
echo "waczreplay: the archived page replays"
