package main

import (
	"crypto/x509"
	"fmt"
	"os"

	"github.com/crawlkit/crawlkit/bench/internal/harness"
)

// trustOnly makes caFile the only root the process's TLS clients trust.
//
// crawlkit.Config has no field for a TLS configuration or a transport (the
// fetch package has Config.Transport, but the Crawler builds its Fetcher
// itself), so the root pool is set the way Go reads the system's: from
// SSL_CERT_FILE, with SSL_CERT_DIR pointed at a directory that does not
// exist so that no system root is added. crypto/x509 loads the system pool
// once, on first use, so this must run before the first TLS handshake; the
// check at the end loads it and confirms it holds the CA.
func trustOnly(caFile string) error {
	want, err := harness.RootPool(caFile)
	if err != nil {
		return err
	}
	os.Setenv("SSL_CERT_FILE", caFile)
	os.Setenv("SSL_CERT_DIR", "/nonexistent-crawl-crawlkit-cert-dir")
	got, err := x509.SystemCertPool()
	if err != nil {
		return fmt.Errorf("crawl-crawlkit: system pool: %w", err)
	}
	if !got.Equal(want) {
		return fmt.Errorf("crawl-crawlkit: the system root pool is not %s alone (was it loaded before -ca was applied?)", caFile)
	}
	return nil
}
