package harness

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
)

// RootPool returns a certificate pool holding the PEM certificates of
// caFile and nothing else, for a client that must trust the web's test CA
// (and never skip verification).
func RootPool(caFile string) (*x509.CertPool, error) {
	b, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("harness: %s holds no PEM certificate", caFile)
	}
	return pool, nil
}

// TransportFor returns the transport the peer crawlers (colly, gocrawl) use
// for p: Transport(p.Web), and when p.CAFile is set, one whose TLS client
// trusts that CA and which attempts HTTP/2, as Go's default transport does
// (a transport with its own dialer must ask for HTTP/2 explicitly).
func TransportFor(p Params) (*http.Transport, error) {
	t := Transport(p.Web)
	if p.CAFile == "" {
		return t, nil
	}
	pool, err := RootPool(p.CAFile)
	if err != nil {
		return nil, err
	}
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	t.ForceAttemptHTTP2 = true
	return t, nil
}
