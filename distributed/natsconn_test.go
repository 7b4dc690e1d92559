package distributed_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/distributed"
	"github.com/crawlkit/crawlkit/distributed/internal/natsd"
)

// testPKI writes a CA, a server certificate for 127.0.0.1 and a client
// certificate, all made here, as PEM files in dir.
type testPKI struct{ ca, serverCert, serverKey, clientCert, clientKey string }

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	now := time.Now()
	caKey := key()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "crawlkit test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leaf := func(serial int64, name string, usage x509.ExtKeyUsage) (certPath, keyPath string) {
		k := key()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return write(name+".pem", "CERTIFICATE", der), write(name+"-key.pem", "EC PRIVATE KEY", kder)
	}
	p := testPKI{ca: write("ca.pem", "CERTIFICATE", caDER)}
	p.serverCert, p.serverKey = leaf(2, "server", x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = leaf(3, "client", x509.ExtKeyUsageClientAuth)
	return p
}

// startServer starts an in-process JetStream server with cfg and returns
// its client URL.
func startServer(t *testing.T, cfg natsd.Config) string {
	t.Helper()
	cfg.Name, cfg.Port, cfg.StoreDir = "secured", -1, t.TempDir()
	s, err := natsd.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s.ClientURL()
}

// tinyCrawl runs one crawl node (the crawlnode command) on a small web with
// the connection flags conn, and checks that it crawled the whole web.
func tinyCrawl(t *testing.T, natsURL, crawlID string, conn ...string) *crawltest.Web {
	t.Helper()
	web := newWeb(t, crawltest.Config{Hosts: 6, PagesPerHost: 4, Seed: 5, Agent: testToken, MinGap: 10 * time.Millisecond})
	crawlWith(t, web, natsURL, crawlID, conn...)
	return web
}

// crawlWith runs one crawl node (the crawlnode command) on web with the
// further flags, and checks that it crawled the whole web.
func crawlWith(t *testing.T, web *crawltest.Web, natsURL, crawlID string, conn ...string) {
	t.Helper()
	args := append([]string{"-nats", natsURL, "-crawl", crawlID, "-id", "n1", "-partitions", "4",
		"-user-agent", testAgent, "-delay", "10ms", "-member-ttl", "1s", "-robots-retries", "-1",
		"-allow-private", "127.0.0.0/8", "-route-tld", "test=" + web.Addr(), "-results"}, conn...)
	for _, s := range web.Seeds() {
		args = append(args, "-seed", s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	if err := distributed.RunCommand(ctx, args, &out, &errOut); err != nil {
		t.Fatalf("crawlnode %v: %v\n%s", conn, err, errOut.String())
	}
	if !strings.Contains(out.String(), "stats ") {
		t.Fatalf("crawlnode printed no stats: %q", out.String())
	}
	checkCrawl(t, web, 0)
}

// TestNATSFlagsTLS runs the node and the results writer against a server
// that requires TLS with client certificates from a CA made here, and
// checks that leaving out the CA or the client certificate fails.
func TestNATSFlagsTLS(t *testing.T) {
	pki := newTestPKI(t)
	url := startServer(t, natsd.Config{TLSCert: pki.serverCert, TLSKey: pki.serverKey, TLSCA: pki.ca, TLSVerify: true})
	url = strings.Replace(url, "nats://", "tls://", 1)
	tls := []string{"-nats-tls-ca", pki.ca, "-nats-tls-cert", pki.clientCert, "-nats-tls-key", pki.clientKey}
	web := tinyCrawl(t, url, "tls", tls...)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	args := append([]string{"-nats", url, "-crawl", "tls", "-out", t.TempDir(), "-until-done"}, tls...)
	if err := distributed.RunResultsCommand(ctx, args, &out, &errOut); err != nil {
		t.Fatalf("crawlresults: %v\n%s", err, errOut.String())
	}
	var written, skipped, total int
	if _, err := fmt.Sscanf(out.String()[strings.LastIndex(out.String(), "results written"):], "results written=%d skipped=%d total=%d", &written, &skipped, &total); err != nil {
		t.Fatalf("crawlresults printed %q: %v", out.String(), err)
	}
	// Every page of the truth has a record; trap pages and refused URLs
	// come on top.
	if truth := len(web.TruthFor(testToken, 0).URLs()); written < truth {
		t.Errorf("crawlresults over TLS wrote %d records, want at least the %d pages of the truth", written, truth)
	}

	for name, bad := range map[string][]string{
		"no CA":                 {"-nats-tls-cert", pki.clientCert, "-nats-tls-key", pki.clientKey},
		"no client certificate": {"-nats-tls-ca", pki.ca},
	} {
		args := append([]string{"-nats", url, "-crawl", "tls", "-out", t.TempDir()}, bad...)
		err := distributed.RunResultsCommand(ctx, args, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), "connecting to") {
			t.Errorf("%s: crawlresults returned %v, want a connection error", name, err)
		}
	}
}

// TestNATSFlagsNKey runs a node that signs in with an NKey seed file, and
// checks that a node without it is refused.
func TestNATSFlagsNKey(t *testing.T) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	seed, _ := kp.Seed()
	seedFile := filepath.Join(t.TempDir(), "user.nk")
	if err := os.WriteFile(seedFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	url := startServer(t, natsd.Config{Configure: func(o *server.Options) {
		o.Nkeys = []*server.NkeyUser{{Nkey: pub}}
	}})
	tinyCrawl(t, url, "nkey", "-nats-nkey", seedFile)

	err = distributed.RunCommand(context.Background(), []string{"-nats", url, "-id", "x", "-seed", "http://h0000.test/"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Errorf("a node without the NKey: %v, want an authorization error", err)
	}
}

// TestNATSFlagsCreds runs a node with a credentials file (a user JWT signed
// by an account of an operator made here) against a server in operator
// mode, and reads the members with the same credentials.
func TestNATSFlagsCreds(t *testing.T) {
	must := func(s string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	okp, _ := nkeys.CreateOperator()
	opub := must(okp.PublicKey())
	oc := jwt.NewOperatorClaims(opub)
	oc.Name = "test-operator"
	ojwt := must(oc.Encode(okp))
	op, err := jwt.DecodeOperatorClaims(ojwt)
	if err != nil {
		t.Fatal(err)
	}
	account := func(name string, js bool) (nkeys.KeyPair, string, string) {
		kp, _ := nkeys.CreateAccount()
		pub := must(kp.PublicKey())
		ac := jwt.NewAccountClaims(pub)
		ac.Name = name
		if js {
			ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
		}
		return kp, pub, must(ac.Encode(okp))
	}
	_, sysPub, sysJWT := account("SYS", false)
	akp, apub, ajwt := account("CRAWL", true)
	resolver := &server.MemAccResolver{}
	_ = resolver.Store(sysPub, sysJWT)
	_ = resolver.Store(apub, ajwt)

	ukp, _ := nkeys.CreateUser()
	uc := jwt.NewUserClaims(must(ukp.PublicKey()))
	uc.Name = "crawler"
	ujwt := must(uc.Encode(akp))
	useed, _ := ukp.Seed()
	creds, err := jwt.FormatUserConfig(ujwt, useed)
	if err != nil {
		t.Fatal(err)
	}
	credsFile := filepath.Join(t.TempDir(), "crawler.creds")
	if err := os.WriteFile(credsFile, creds, 0o600); err != nil {
		t.Fatal(err)
	}
	url := startServer(t, natsd.Config{Configure: func(o *server.Options) {
		o.TrustedOperators = []*jwt.OperatorClaims{op}
		o.AccountResolver = resolver
		o.SystemAccount = sysPub
	}})
	tinyCrawl(t, url, "creds", "-nats-creds", credsFile)

	var f distributed.NATSFlags
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	f.Register(fs)
	if err := fs.Parse([]string{"-nats-creds", credsFile}); err != nil {
		t.Fatal(err)
	}
	opts, err := f.Options()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// The node has left: the bucket exists, and is empty.
	if m, err := distributed.Members(ctx, url, "creds", opts...); err != nil || len(m) != 0 {
		t.Errorf("Members with the credentials: %v, %v; want none and no error", m, err)
	}
	if _, err := distributed.Members(ctx, url, "creds"); err == nil {
		t.Error("Members without credentials succeeded")
	}
}

// TestNATSFlagsRefused checks the flag combinations NATSFlags refuses
// before connecting.
func TestNATSFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-nats-tls-ca", filepath.Join(dir, "missing.pem")},
		{"-nats-tls-cert", file},
		{"-nats-creds", file, "-nats-nkey", file},
		{"-nats-user", "u", "-nats-token", "t"},
		{"-nats-password", "p"},
	} {
		var f distributed.NATSFlags
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		f.Register(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Options(); !errors.Is(err, distributed.ErrNATSFlags) {
			t.Errorf("%v: %v, want ErrNATSFlags", args, err)
		}
	}
}
