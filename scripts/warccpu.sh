#!/bin/sh
# warccpu.sh measures what archiving costs a crawl: it runs the quickstart
# on the synthetic web (crawltest, in the same process, on loopback) with
# and without WARC files, alternately, and prints each run's CPU time
# (user + system, /usr/bin/time) and pages. The synthetic web's server runs
# in the crawler's process, so its CPU is in both figures.
#
# Usage: scripts/warccpu.sh [runs [hosts [pages-per-host]]]
# QUICKSTART, if set, is a quickstart binary to measure instead of this
# checkout's.
set -eu
cd "$(dirname "$0")/.."
runs=${1:-3}
hosts=${2:-40}
pages=${3:-50}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=${QUICKSTART:-$work/quickstart}
[ -n "${QUICKSTART:-}" ] || go build -o "$bin" ./examples/quickstart

i=0
while [ "$i" -lt "$runs" ]; do
	for mode in off on; do
		rm -rf "$work/data"
		warc=off
		[ "$mode" = on ] && warc=""
		/usr/bin/time -f "%U %S" -o "$work/time" "$bin" -data-dir "$work/data" -warc-dir "$warc" \
			-web-hosts "$hosts" -web-pages "$pages" -delay 1ms -workers 16 >"$work/log"
		fetched=$(sed -n 's/.*Pages: \([0-9]*\) fetched.*/\1/p' "$work/log")
		bytes=$(du -sk "$work/data/warc" 2>/dev/null | cut -f1 || true)
		awk -v m="$mode" -v p="$fetched" -v k="${bytes:-0}" '{printf "warc=%s cpu=%.2fs pages=%s warc_kib=%s\n", m, $1+$2, p, (m=="on"?k:0)}' "$work/time"
	done
	i=$((i + 1))
done
