#!/bin/sh
# memcurve.sh measures how crawlkit's memory grows with the pages fetched:
# it serves a large synthetic web (cmd/benchweb, its own process) and crawls
# it with crawl-crawlkit twice, with the crawl state in memory and with the
# frontier and seen set on disk (-data-dir, Pebble), sampling the resident
# set every few seconds. The raw result lines go to results/memcurve.jsonl;
# cmd/memtable prints them as a table.
#
#	bench/memcurve.sh [hosts] [pages-per-host] [max-pages]
#
# MODES=disk crawls only with the state on disk.
set -eu
cd "$(dirname "$0")"
hosts=${1:-3000}
pages=${2:-100}
max=${3:-240000}
bin=.bin
mkdir -p "$bin" results
go build -o "$bin/" ./cmd/benchweb ./cmd/crawl-crawlkit
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; [ -n "${holder:-}" ] && kill "$holder" 2>/dev/null; true' EXIT
mkfifo "$tmp/in"
sleep 1000000 >"$tmp/in" &
holder=$!
"$bin/benchweb" -hosts "$hosts" -pages "$pages" -crawl-delay 50ms -max-depth 0 <"$tmp/in" >"$tmp/web.json" &
i=0
while [ ! -s "$tmp/web.json" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
web=$(sed -n 's/.*"web":"\([^"]*\)".*/\1/p' "$tmp/web.json")
ctl=$(sed -n 's/.*"control":"\([^"]*\)".*/\1/p' "$tmp/web.json")
out=results/memcurve.jsonl
: >"$out"
for mode in ${MODES:-memory disk}; do
	extra=""
	if [ "$mode" = disk ]; then extra="-data-dir $tmp/crawl"; fi
	# shellcheck disable=SC2086
	"$bin/crawl-crawlkit" -web "$web" -control "$ctl" -label "$mode" -max-depth 0 -delay 1ms \
		-workers 32 -max-pages "$max" -timeout 20m -sample-every 5s $extra >>"$out"
done
go run ./cmd/memtable "$out"
