package distributed

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// NATSFlags are the connection settings every command of the package that
// talks to NATS accepts (crawlnode, crawlresults, crawlstats), so that one
// secured cluster is reached the same way by all of them: server TLS with a
// private CA, a client certificate (mutual TLS), a credentials file (a user
// JWT and its NKey seed, for servers in operator mode), a bare NKey seed, a
// user and password, or a token.
type NATSFlags struct {
	URL string
	// CAFile is a PEM file of the CAs that sign the servers' certificates;
	// CertFile and KeyFile a client certificate and key, for servers that
	// verify clients.
	CAFile, CertFile, KeyFile string
	// CredsFile is a NATS credentials file (user JWT and NKey seed).
	CredsFile string
	// NKeyFile is a file holding a user NKey seed ("SU...").
	NKeyFile string
	// User and Password, or Token, for servers with simple
	// authorization. Empty Password and Token are read from the
	// environment (NATS_PASSWORD, NATS_TOKEN), which keeps them out of
	// the process list.
	User, Password, Token string
}

// Register adds the flags to fs: -nats and the -nats-* options.
func (f *NATSFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.URL, "nats", "nats://127.0.0.1:4222", "NATS server URLs, comma-separated")
	fs.StringVar(&f.CAFile, "nats-tls-ca", "", "PEM file of the CAs that sign the NATS servers' certificates (implies TLS)")
	fs.StringVar(&f.CertFile, "nats-tls-cert", "", "client certificate for NATS servers that verify clients (with -nats-tls-key)")
	fs.StringVar(&f.KeyFile, "nats-tls-key", "", "key of -nats-tls-cert")
	fs.StringVar(&f.CredsFile, "nats-creds", "", "NATS credentials file (user JWT and NKey seed)")
	fs.StringVar(&f.NKeyFile, "nats-nkey", "", "file holding a NATS user NKey seed")
	fs.StringVar(&f.User, "nats-user", "", "NATS user name (password from -nats-password or $NATS_PASSWORD)")
	fs.StringVar(&f.Password, "nats-password", "", "NATS password (default $NATS_PASSWORD)")
	fs.StringVar(&f.Token, "nats-token", "", "NATS token (default $NATS_TOKEN)")
}

// ErrNATSFlags is wrapped by the error of NATSFlags.Options for an
// unusable combination.
var ErrNATSFlags = errors.New("distributed: NATS connection flags")

// Options returns the nats.Options the flags ask for. It checks that the
// named files exist, so a typo fails before any connection is tried.
func (f NATSFlags) Options() ([]nats.Option, error) {
	var opts []nats.Option
	for _, file := range []struct{ flag, path string }{
		{"-nats-tls-ca", f.CAFile}, {"-nats-tls-cert", f.CertFile}, {"-nats-tls-key", f.KeyFile},
		{"-nats-creds", f.CredsFile}, {"-nats-nkey", f.NKeyFile},
	} {
		if file.path == "" {
			continue
		}
		if _, err := os.Stat(file.path); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrNATSFlags, file.flag, err)
		}
	}
	if (f.CertFile == "") != (f.KeyFile == "") {
		return nil, fmt.Errorf("%w: -nats-tls-cert and -nats-tls-key go together", ErrNATSFlags)
	}
	password, token := f.Password, f.Token
	if password == "" && f.User != "" {
		password = os.Getenv("NATS_PASSWORD")
	}
	if token == "" {
		token = os.Getenv("NATS_TOKEN")
	}
	auths := 0
	for _, set := range []bool{f.CredsFile != "", f.NKeyFile != "", f.User != "", f.Token != ""} {
		if set {
			auths++
		}
	}
	if auths > 1 {
		return nil, fmt.Errorf("%w: give one of -nats-creds, -nats-nkey, -nats-user and -nats-token", ErrNATSFlags)
	}
	if f.Password != "" && f.User == "" {
		return nil, fmt.Errorf("%w: -nats-password needs -nats-user", ErrNATSFlags)
	}
	if f.CAFile != "" {
		opts = append(opts, nats.RootCAs(f.CAFile))
	}
	if f.CertFile != "" {
		opts = append(opts, nats.ClientCert(f.CertFile, f.KeyFile))
	}
	switch {
	case f.CredsFile != "":
		opts = append(opts, nats.UserCredentials(f.CredsFile))
	case f.NKeyFile != "":
		o, err := nats.NkeyOptionFromSeed(f.NKeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: -nats-nkey: %w", ErrNATSFlags, err)
		}
		opts = append(opts, o)
	case f.User != "":
		opts = append(opts, nats.UserInfo(f.User, password))
	case token != "":
		opts = append(opts, nats.Token(token))
	}
	return opts, nil
}

// connectNATS is the one place a NATS connection is made, for nodes,
// results writers and the stats commands alike: it reconnects for ever
// (the commands outlive server restarts), names the client, and applies
// the caller's options (TLS, credentials) last, so they can override
// these defaults.
func connectNATS(url, name string, opts []nats.Option) (*nats.Conn, error) {
	base := []nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.Timeout(5 * time.Second),
	}
	nc, err := nats.Connect(url, append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("distributed: connecting to %s: %w", redactURL(url), err)
	}
	return nc, nil
}

// redactURL hides passwords in NATS URLs (nats://user:pass@host) for
// error messages.
func redactURL(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		scheme, rest, ok := strings.Cut(p, "://")
		if !ok {
			continue
		}
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			parts[i] = scheme + "://REDACTED@" + rest[at+1:]
		}
	}
	return strings.Join(parts, ",")
}
