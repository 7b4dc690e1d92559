module github.com/crawlkit/crawlkit/bench/urlnormcmp

go 1.26.0

require (
	github.com/PuerkitoBio/purell v1.2.1
	github.com/crawlkit/crawlkit v0.0.0
)

require (
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)

replace github.com/crawlkit/crawlkit => ../..
