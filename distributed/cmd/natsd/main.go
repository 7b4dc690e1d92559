// Command natsd runs a NATS server with JetStream built from the
// nats-server Go module (2.11 or newer, as the distributed crawl requires),
// for local trials where no suitable nats-server binary is installed:
//
//	natsd -port 4222 -store /tmp/js
//
// or a three-node cluster on one machine:
//
//	natsd -name a -port 4222 -cluster c -cluster-port 6222 -routes nats-route://127.0.0.1:6222,nats-route://127.0.0.1:6223,nats-route://127.0.0.1:6224 &
//	natsd -name b -port 4223 -cluster c -cluster-port 6223 -routes ... &
//	natsd -name c -port 4224 -cluster c -cluster-port 6224 -routes ... &
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/crawlkit/crawlkit/distributed/internal/natsd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := natsd.Run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "natsd:", err)
		os.Exit(1)
	}
}
