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
	// TLSCert and TLSKey make clients connect with TLS; TLSCA, with
	// TLSVerify, makes the server require client certificates signed by
	// it (mutual TLS).
	TLSCert, TLSKey, TLSCA string
	TLSVerify              bool
	// ProfPort, if not zero, serves Go's pprof profiles of the server on
	// this port (127.0.0.1 unless Host says otherwise), to see where a
	// crawl's server CPU goes.
	ProfPort int
	// Configure, if set, changes the server's options last (tests set
	// NKey users or operator mode with it).
	Configure func(*server.Options)
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
		ProfPort:   o.ProfPort,
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
	if o.TLSCert != "" {
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: o.TLSCert, KeyFile: o.TLSKey, CaFile: o.TLSCA, Verify: o.TLSVerify})
		if err != nil {
			return nil, fmt.Errorf("natsd: TLS: %w", err)
		}
		opts.TLSConfig, opts.TLSVerify, opts.TLSTimeout = tc, o.TLSVerify, 5
	}
	if o.Configure != nil {
		o.Configure(opts)
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
	fs.StringVar(&o.TLSCert, "tls-cert", "", "server certificate (PEM): clients connect with TLS")
	fs.StringVar(&o.TLSKey, "tls-key", "", "key of -tls-cert")
	fs.StringVar(&o.TLSCA, "tls-ca", "", "CA of the client certificates (with -tls-verify)")
	fs.BoolVar(&o.TLSVerify, "tls-verify", false, "require client certificates signed by -tls-ca")
	fs.IntVar(&o.ProfPort, "prof-port", 0, "serve Go's pprof profiles on this port (0: none)")
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
