// Package natsd runs a NATS server with JetStream from the nats-server Go
// module, for tests and local trials of the distributed crawl: one server
// embedded in a process, or a node of a small cluster. Production
// deployments run the nats-server release binary instead (see the README).
package natsd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Config describes one server.
type Config struct {
	// Name is the server's name, unique in a cluster.
	Name string
	// Host and Port are the client listener (Port -1: a free port).
	Host string
	Port int
	// StoreDir holds JetStream's files.
	StoreDir string
	// ClusterName, ClusterPort and Routes make the server a cluster node:
	// Routes lists every node's cluster URL ("nats-route://127.0.0.1:6222").
	ClusterName string
	ClusterPort int
	Routes      []string
}

// Start starts a server and waits until it accepts clients.
func Start(o Config) (*server.Server, error) {
	opts := &server.Options{
		ServerName: o.Name,
		Host:       o.Host,
		Port:       o.Port,
		JetStream:  true,
		StoreDir:   o.StoreDir,
		NoLog:      true,
		NoSigs:     true,
	}
	if opts.Host == "" {
		opts.Host = "127.0.0.1"
	}
	if o.ClusterName != "" {
		opts.Cluster = server.ClusterOpts{Name: o.ClusterName, Host: opts.Host, Port: o.ClusterPort}
		for _, r := range o.Routes {
			u, err := url.Parse(r)
			if err != nil {
				return nil, fmt.Errorf("natsd: route %q: %w", r, err)
			}
			opts.Routes = append(opts.Routes, u)
		}
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("natsd: %w", err)
	}
	s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		s.Shutdown()
		return nil, errors.New("natsd: server not ready after 30s")
	}
	return s, nil
}

// Run is the natsd command: it starts a server from flags, prints
// "ready URL" on stdout, and serves until ctx ends.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("natsd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o Config
	fs.StringVar(&o.Name, "name", "natsd", "server name (unique in a cluster)")
	fs.StringVar(&o.Host, "host", "127.0.0.1", "listen host")
	fs.IntVar(&o.Port, "port", 4222, "client port (-1: any free port)")
	fs.StringVar(&o.StoreDir, "store", "", "JetStream directory (default: a temporary directory)")
	fs.StringVar(&o.ClusterName, "cluster", "", "cluster name (empty: no cluster)")
	fs.IntVar(&o.ClusterPort, "cluster-port", 6222, "cluster port")
	routes := fs.String("routes", "", "cluster routes, comma-separated (nats-route://host:port)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *routes != "" {
		o.Routes = strings.Split(*routes, ",")
	}
	if o.StoreDir == "" {
		dir, err := os.MkdirTemp("", "natsd-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		o.StoreDir = dir
	}
	s, err := Start(o)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ready %s\n", s.ClientURL())
	<-ctx.Done()
	s.Shutdown()
	s.WaitForShutdown()
	return nil
}
