package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// issuer is this run's test CA. It gives every host its own certificate
// (ECDSA P-256, as most large sites serve), made at the host's first
// handshake and kept, so that each host presents a certificate for its own
// name, as separate sites do.
type issuer struct {
	ca     *x509.Certificate
	caDER  []byte
	caKey  *ecdsa.PrivateKey
	key    *ecdsa.PrivateKey // the hosts' key (one for all: keys cost, names are what matter)
	known  func(name string) bool
	serial atomic.Int64

	mu    sync.Mutex
	certs map[string]*tls.Certificate
}

// newIssuer makes a CA for this run and writes its certificate as PEM to
// caFile, for the crawlers' root pools. known says which server names it
// issues certificates for.
func newIssuer(caFile string, known func(name string) bool) (*issuer, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "realisticweb test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, err
	}
	is := &issuer{ca: ca, caDER: der, caKey: caKey, key: key, known: known, certs: map[string]*tls.Certificate{}}
	is.serial.Store(1)
	return is, nil
}

var errUnknownServerName = errors.New("realisticweb: no certificate for this server name")

// GetCertificate is the server's tls.Config.GetCertificate: the
// certificate of the host the client names (SNI).
func (is *issuer) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	name := hello.ServerName
	if !is.known(name) {
		return nil, errUnknownServerName
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	if c := is.certs[name]; c != nil {
		return c, nil
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(is.serial.Add(1)),
		Subject:      pkix.Name{CommonName: name},
		DNSNames:     []string{name},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, is.ca, &is.key.PublicKey, is.caKey)
	if err != nil {
		return nil, err
	}
	// The chain a real server sends: its certificate and the issuer's.
	c := &tls.Certificate{Certificate: [][]byte{der, is.caDER}, PrivateKey: is.key}
	is.certs[name] = c
	return c, nil
}
