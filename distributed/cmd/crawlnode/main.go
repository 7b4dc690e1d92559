// Command crawlnode is one node of a distributed crawlkit crawl over NATS
// JetStream (see package github.com/crawlkit/crawlkit/distributed
// and its README). Start as many as you like with the same -nats, -crawl,
// -partitions and seeds:
//
//	crawlnode -nats nats://n1:4222,nats://n2:4222,nats://n3:4222 -replicas 3 \
//	    -crawl news -id node-a -seeds-file seeds.txt -http :9090 \
//	    -user-agent "mybot/1.0 (+https://example.com/bot)"
//
// With -http :9090 (all interfaces) the node publishes its host name and
// port in the membership bucket, where crawlstats -nats finds it; give
// -advertise host:port if other machines reach it at another address, or
// if the host name does not resolve there. A node whose host name is
// localhost refuses to start without -advertise.
//
// Each node exits when the whole crawl is finished; SIGINT or SIGTERM makes
// it leave gracefully (its partitions are handed to the others at once).
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
	if err := distributed.RunCommand(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "crawlnode:", err)
		os.Exit(1)
	}
}
