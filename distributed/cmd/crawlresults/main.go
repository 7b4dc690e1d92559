// Command crawlresults writes the results of a distributed crawl (nodes
// started with -results) to JSON Lines files, each page exactly once, even
// when nodes or the command itself are killed and started again:
//
//	crawlresults -nats nats://127.0.0.1:4222 -crawl news -out results/ -until-done
//
// Each line is a crawlkit.PageRecord with the page's "id" (the URL's key)
// and the "node" that fetched it. Run one per -out directory.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/crawlkit/crawlkit/distributed"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := distributed.RunResultsCommand(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "crawlresults:", err)
		os.Exit(1)
	}
}
