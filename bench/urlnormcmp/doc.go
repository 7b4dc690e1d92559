// Package urlnormcmp compares urlnorm with github.com/PuerkitoBio/purell in
// benchmarks. It lives in the bench module so that purell never becomes a
// dependency of the crawlkit SDK; it holds no code besides its tests.
//
// Run from the bench directory:
//
//	go test -run '^$' -bench . -benchtime 2s -count 3 -cpu 1 ./urlnormcmp/
package urlnormcmp
