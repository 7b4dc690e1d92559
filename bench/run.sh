#!/bin/sh
# run.sh builds the end-to-end benchmark commands and runs the matrix
# (cmd/matrix), writing the tables into ../BENCHMARKS.md and the raw result
# lines into results/e2e.jsonl. Extra arguments go to the matrix, e.g.
#
#	bench/run.sh -reps 1 -runs small
#	bench/run.sh -runs realistic -reps 3 [-size small|medium|large]
#	bench/run.sh -runs durable -reps 3
set -eu
cd "$(dirname "$0")"
bin=.bin
mkdir -p "$bin"
go build -o "$bin/" ./cmd/benchweb ./cmd/realisticweb ./cmd/crawl-crawlkit ./cmd/crawl-colly ./cmd/crawl-gocrawl ./cmd/matrix
exec "$bin/matrix" -bin "$bin" -md ../BENCHMARKS.md -out results/e2e.jsonl \
	-command "bench/run.sh${*:+ $*}" "$@"
