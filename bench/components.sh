#!/bin/sh
# components.sh runs the component packages' Go benchmarks (short settings,
# three counts each, for a 2-core machine) and summarizes them with benchstat
# (golang.org/x/perf/cmd/benchstat). Raw output goes to
# results/components.txt, the summary to results/components.benchstat.
#
# render (needs Chromium) and the storage adapters (need their servers, or
# in Pebble's case minutes of disk work) are left out; their own sections of
# BENCHMARKS.md give their figures.
set -eu
cd "$(dirname "$0")/.."
out=bench/results
mkdir -p "$out"
go test -run '^$' -bench . -benchtime 200ms -count 3 -timeout 20m \
	./urlnorm ./robots ./extract ./sitemap ./trap ./simhash ./bloom ./fetch ./frontier ./service/frontierapi ./crawltest \
	| tee "$out/components.txt"
benchstat "$out/components.txt" > "$out/components.benchstat"
cat "$out/components.benchstat"
