// Command crawlkit is the smallest crawler built on crawlkit: an in-memory
// Crawler with a Handler. weight.sh counts what it links.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/crawlkit/crawlkit"
)

func main() {
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: "weightbot/1.0 (+https://example.com/bot)",
		Seeds:     os.Args[1:],
		Handler: func(_ context.Context, p *crawlkit.Page) error {
			fmt.Println(p.StatusCode, p.URL)
			return nil
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := c.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
