// Command colly is the smallest crawler built on colly v2: a Collector with
// an OnResponse callback. weight.sh counts what it links.
package main

import (
	"fmt"
	"os"

	"github.com/gocolly/colly/v2"
)

func main() {
	c := colly.NewCollector(colly.UserAgent("weightbot/1.0 (+https://example.com/bot)"))
	c.OnResponse(func(r *colly.Response) { fmt.Println(r.StatusCode, r.Request.URL) })
	for _, s := range os.Args[1:] {
		if err := c.Visit(s); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
}
