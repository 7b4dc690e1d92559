#!/bin/sh
# weight.sh prints, for the smallest crawlkit and colly programs, the
# packages they link (go list -deps, standard library included) and the
# size of their binaries built with default flags.
set -eu
cd "$(dirname "$0")"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '| program | packages | binary bytes |\n| --- | ---: | ---: |\n'
for p in crawlkit colly; do
	go build -o "$out/$p" "./$p"
	n=$(go list -deps "./$p" | wc -l)
	printf '| %s | %d | %d |\n' "$p" "$n" "$(stat -c %s "$out/$p")"
done
