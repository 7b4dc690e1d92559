// Command crawlstats shows a distributed crawl as a whole: which node owns
// which partition, how far each partition lags (messages not delivered and
// not acknowledged, ack floor against the partition's last sequence), each
// node's fetches and rates, and the totals:
//
//	crawlstats -nats nats://127.0.0.1:4222 -crawl news          # text
//	crawlstats -nats nats://127.0.0.1:4222 -crawl news -json    # JSON
//	crawlstats -nats nats://127.0.0.1:4222 -crawl news -http 127.0.0.1:8090
//
// With -http it serves the dashboard, with a Cluster panel, at / and the
// status as JSON at /cluster. It takes the same NATS flags as crawlnode
// (-nats-tls-ca, -nats-creds, …). Given /stats URLs instead, it sums them:
//
//	crawlstats http://10.0.0.5:9090/stats http://10.0.0.6:9090/stats
//
// A node publishes the address given by its -advertise flag, or its -http
// address (with its host name if -http listens on all interfaces); members
// that published an address naming no machine, such as [::]:9090, are shown
// with an error.
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
	if err := distributed.RunStatsCommand(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "crawlstats:", err)
		os.Exit(1)
	}
}
