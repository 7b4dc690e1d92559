package fetch

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// StubResolver is a Resolver that asks DNS servers directly (RFC 1035 over
// UDP, retried over TCP when the answer is truncated, §4.2), so that it
// knows each answer's TTL: the smallest TTL of the records used, CNAMEs
// included. The system resolver (NetResolver) does not report TTLs.
//
// It resolves names as absolute (no search list) and does not read
// /etc/hosts: crawl targets are public names. Without Servers it reads the
// servers from /etc/resolv.conf on first use and keeps them for 5 seconds:
// the first lookup after that reads the file again, so edits take effect
// within seconds (as with Go's own resolver) without a read per lookup. If
// a later read fails, the servers read before stay in use.
//
// A StubResolver is safe for concurrent use; do not copy it after first use.
type StubResolver struct {
	// Servers are "ip:port" addresses of recursive resolvers, tried in
	// order. Default: the nameserver lines of /etc/resolv.conf.
	Servers []string
	// Timeout bounds one query to one server (default 2 s); Attempts is
	// how many times the server list is tried (default 2).
	Timeout  time.Duration
	Attempts int
	// Dial opens connections to the servers (default net.Dialer).
	Dial DialFunc
	// Now times the re-reading of /etc/resolv.conf; nil means time.Now.
	Now func() time.Time

	confPath string // the resolv.conf file; tests set it (default /etc/resolv.conf)

	mu      sync.Mutex
	sys     []string  // servers last read from confPath
	sysErr  error     // why no servers could be read, when sys is nil
	sysRead time.Time // when confPath was last read; zero: never
}

// resolvConfMaxAge is how long servers read from resolv.conf are used
// before the file is read again (Go's resolver also checks every 5 s).
const resolvConfMaxAge = 5 * time.Second

// errNoServers reports that no DNS server is configured.
var errNoServers = errors.New("fetch: no DNS servers configured")

// maxUDPSize is the EDNS(0) payload size advertised (RFC 6891 §6.2.5):
// 1232 bytes avoids IP fragmentation on every common path (DNS flag day
// 2020 recommendation).
const maxUDPSize = 1232

// Resolve returns host's IPv4 and IPv6 addresses and the TTL of the answer.
// A name that does not exist gives a *net.DNSError with IsNotFound set.
func (r *StubResolver) Resolve(ctx context.Context, host string) ([]netip.Addr, time.Duration, error) {
	servers, err := r.servers()
	if err != nil {
		return nil, 0, err
	}
	name, err := dnsmessage.NewName(strings.TrimSuffix(host, ".") + ".")
	if err != nil || len(host) == 0 {
		return nil, 0, &net.DNSError{Err: "invalid name", Name: host, IsNotFound: true}
	}
	var addrs []netip.Addr
	ttl := time.Duration(-1)
	found := false
	for _, qtype := range []dnsmessage.Type{dnsmessage.TypeA, dnsmessage.TypeAAAA} {
		a, t, err := r.query(ctx, servers, name, qtype)
		var de *net.DNSError
		if errors.As(err, &de) && de.IsNotFound {
			// NXDOMAIN holds for every type; NODATA only for this one.
			if de.Err == "no such host" {
				return nil, 0, err
			}
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		found = true
		addrs = append(addrs, a...)
		if ttl < 0 || t < ttl {
			ttl = t
		}
	}
	if !found || len(addrs) == 0 {
		return nil, 0, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	return addrs, ttl, nil
}

// servers returns Servers or, without them, the servers of resolv.conf,
// read again when the last read is resolvConfMaxAge old.
func (r *StubResolver) servers() ([]string, error) {
	if len(r.Servers) > 0 {
		return r.Servers, nil
	}
	clock := time.Now
	if r.Now != nil {
		clock = r.Now
	}
	now := clock()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.sysRead.IsZero() && now.Sub(r.sysRead) < resolvConfMaxAge {
		return r.sys, r.sysErr
	}
	path := r.confPath
	if path == "" {
		path = "/etc/resolv.conf"
	}
	servers, err := systemNameservers(path)
	r.sysRead = now
	switch {
	case err == nil:
		r.sys, r.sysErr = servers, nil
	case r.sys == nil:
		r.sysErr = err
	}
	// Otherwise the read failed (the file may be being rewritten) and the
	// servers read before stay in use.
	return r.sys, r.sysErr
}

// query asks the servers for one record type, trying each in turn.
func (r *StubResolver) query(ctx context.Context, servers []string, name dnsmessage.Name, qtype dnsmessage.Type) ([]netip.Addr, time.Duration, error) {
	attempts := r.Attempts
	if attempts <= 0 {
		attempts = 2
	}
	var lastErr error
	for range attempts {
		for _, server := range servers {
			msg, err := r.exchange(ctx, server, name, qtype)
			if err == nil {
				return answerAddrs(msg, name, qtype)
			}
			lastErr = err
			if ctx.Err() != nil {
				return nil, 0, ctx.Err()
			}
		}
	}
	return nil, 0, &net.DNSError{Err: lastErr.Error(), Name: strings.TrimSuffix(name.String(), "."), IsTemporary: true}
}

// exchange sends one query to server over UDP, and over TCP if the answer
// comes back truncated, and returns the validated response.
func (r *StubResolver) exchange(ctx context.Context, server string, name dnsmessage.Name, qtype dnsmessage.Type) (*dnsmessage.Message, error) {
	id := uint16(rand.Uint32())
	b := dnsmessage.NewBuilder(make([]byte, 2, 514), dnsmessage.Header{ID: id, RecursionDesired: true})
	b.EnableCompression()
	q := dnsmessage.Question{Name: name, Type: qtype, Class: dnsmessage.ClassINET}
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAdditionals(); err != nil {
		return nil, err
	}
	var opt dnsmessage.ResourceHeader
	if err := opt.SetEDNS0(maxUDPSize, dnsmessage.RCodeSuccess, false); err != nil {
		return nil, err
	}
	if err := b.OPTResource(opt, dnsmessage.OPTResource{}); err != nil {
		return nil, err
	}
	query, err := b.Finish()
	if err != nil {
		return nil, err
	}
	binary.BigEndian.PutUint16(query, uint16(len(query)-2)) // TCP length prefix

	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	dial := r.Dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	for _, network := range []string{"udp", "tcp"} {
		conn, err := dial(ctx, network, server)
		if err != nil {
			return nil, err
		}
		msg, err := roundTripDNS(ctx, conn, network, query, id, q)
		conn.Close()
		if err != nil {
			return nil, err
		}
		if msg.Truncated && network == "udp" {
			continue
		}
		return msg, nil
	}
	return nil, errors.New("truncated answer over TCP")
}

// roundTripDNS writes query on conn and reads the matching response.
// Responses with another ID or question are ignored (RFC 5452 §9.1), so a
// spoofed or stale datagram cannot answer the query.
func roundTripDNS(ctx context.Context, conn net.Conn, network string, query []byte, id uint16, q dnsmessage.Question) (*dnsmessage.Message, error) {
	if deadline, ok := ctx.Deadline(); ok {
		conn.SetDeadline(deadline)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if network == "udp" {
		if _, err := conn.Write(query[2:]); err != nil {
			return nil, err
		}
	} else if _, err := conn.Write(query); err != nil {
		return nil, err
	}
	buf := make([]byte, 64<<10)
	for {
		var n int
		if network == "udp" {
			var err error
			if n, err = conn.Read(buf[:maxUDPSize]); err != nil {
				return nil, err
			}
		} else {
			if _, err := io.ReadFull(conn, buf[:2]); err != nil {
				return nil, err
			}
			n = int(binary.BigEndian.Uint16(buf[:2]))
			if _, err := io.ReadFull(conn, buf[:n]); err != nil {
				return nil, err
			}
		}
		var msg dnsmessage.Message
		if err := msg.Unpack(buf[:n]); err != nil {
			if network == "udp" {
				continue // garbage datagram: keep waiting for the real answer
			}
			return nil, err
		}
		if msg.ID != id || !msg.Response || len(msg.Questions) != 1 ||
			msg.Questions[0].Type != q.Type || !strings.EqualFold(msg.Questions[0].Name.String(), q.Name.String()) {
			if network == "udp" {
				continue
			}
			return nil, errors.New("DNS response does not match the query")
		}
		return &msg, nil
	}
}

// maxCNAMEs bounds the CNAME chain followed inside one answer.
const maxCNAMEs = 8

// answerAddrs extracts the addresses for name (following CNAMEs within the
// answer section) and the smallest TTL of the records used.
func answerAddrs(msg *dnsmessage.Message, name dnsmessage.Name, qtype dnsmessage.Type) ([]netip.Addr, time.Duration, error) {
	host := strings.TrimSuffix(name.String(), ".")
	switch msg.RCode {
	case dnsmessage.RCodeSuccess:
	case dnsmessage.RCodeNameError:
		return nil, 0, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	default:
		return nil, 0, &net.DNSError{Err: "server answered " + msg.RCode.String(), Name: host, IsTemporary: true}
	}
	target := strings.ToLower(name.String())
	minTTL := uint32(1<<32 - 1)
	var addrs []netip.Addr
	for hops := 0; hops <= maxCNAMEs; hops++ {
		next := ""
		for _, rr := range msg.Answers {
			if strings.ToLower(rr.Header.Name.String()) != target || rr.Header.Class != dnsmessage.ClassINET {
				continue
			}
			switch body := rr.Body.(type) {
			case *dnsmessage.AResource:
				if qtype == dnsmessage.TypeA {
					addrs = append(addrs, netip.AddrFrom4(body.A))
					minTTL = min(minTTL, rr.Header.TTL)
				}
			case *dnsmessage.AAAAResource:
				if qtype == dnsmessage.TypeAAAA {
					addrs = append(addrs, netip.AddrFrom16(body.AAAA))
					minTTL = min(minTTL, rr.Header.TTL)
				}
			case *dnsmessage.CNAMEResource:
				next = strings.ToLower(body.CNAME.String())
				minTTL = min(minTTL, rr.Header.TTL)
			}
		}
		if len(addrs) > 0 || next == "" {
			break
		}
		target = next
	}
	if len(addrs) == 0 {
		return nil, 0, &net.DNSError{Err: "no " + qtype.String() + " records", Name: host, IsNotFound: true}
	}
	return addrs, time.Duration(minTTL) * time.Second, nil
}

// systemNameservers reads the nameserver lines of a resolv.conf file.
func systemNameservers(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNoServers, err)
	}
	defer f.Close()
	var servers []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "nameserver" {
			if a, err := netip.ParseAddr(fields[1]); err == nil {
				servers = append(servers, netip.AddrPortFrom(a, 53).String())
			}
		}
	}
	if len(servers) == 0 {
		return nil, fmt.Errorf("%w in %s", errNoServers, path)
	}
	return servers, nil
}
