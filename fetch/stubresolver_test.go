package fetch

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// fakeDNS is a DNS server on loopback (UDP and TCP on one port) answering
// from a zone table. Names listed in truncate answer over UDP with the TC
// bit only; spoofFirst sends a response with a wrong ID before each real
// UDP answer.
type fakeDNS struct {
	addr       string
	mu         sync.Mutex
	zone       map[string][]dnsmessage.Resource // by lower-case name
	truncate   map[string]bool
	spoofFirst atomic.Bool
	queries    atomic.Int32
	tcpQueries atomic.Int32
}

func rr(name string, ttl uint32, body dnsmessage.ResourceBody) dnsmessage.Resource {
	return dnsmessage.Resource{
		Header: dnsmessage.ResourceHeader{Name: dnsmessage.MustNewName(name), Class: dnsmessage.ClassINET, TTL: ttl},
		Body:   body,
	}
}

func newFakeDNS(t *testing.T) *fakeDNS {
	t.Helper()
	s := &fakeDNS{zone: map[string][]dnsmessage.Resource{}, truncate: map[string]bool{}}
	var pc net.PacketConn
	var ln net.Listener
	for range 20 { // find a port free for both UDP and TCP
		var err error
		if pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		if ln, err = net.Listen("tcp", pc.LocalAddr().String()); err == nil {
			break
		}
		pc.Close()
		pc = nil
	}
	if pc == nil {
		t.Fatal("no port free for both UDP and TCP")
	}
	s.addr = pc.LocalAddr().String()
	t.Cleanup(func() { pc.Close(); ln.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			s.queries.Add(1)
			resp, id := s.answer(buf[:n], true)
			if s.spoofFirst.Load() {
				spoof := append([]byte(nil), resp...)
				binary.BigEndian.PutUint16(spoof, id+1)
				pc.WriteTo(spoof, from)
			}
			pc.WriteTo(resp, from)
		}
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var l [2]byte
				if _, err := io.ReadFull(c, l[:]); err != nil {
					return
				}
				q := make([]byte, binary.BigEndian.Uint16(l[:]))
				if _, err := io.ReadFull(c, q); err != nil {
					return
				}
				s.queries.Add(1)
				s.tcpQueries.Add(1)
				resp, _ := s.answer(q, false)
				binary.BigEndian.PutUint16(l[:], uint16(len(resp)))
				c.Write(append(l[:], resp...))
			}()
		}
	}()
	return s
}

func (s *fakeDNS) add(records ...dnsmessage.Resource) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range records {
		key := strings.ToLower(r.Header.Name.String())
		s.zone[key] = append(s.zone[key], r)
	}
}

func (s *fakeDNS) answer(query []byte, udp bool) ([]byte, uint16) {
	var m dnsmessage.Message
	if err := m.Unpack(query); err != nil || len(m.Questions) != 1 {
		return nil, 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	q := m.Questions[0]
	name := strings.ToLower(q.Name.String())
	resp := dnsmessage.Message{Header: dnsmessage.Header{ID: m.ID, Response: true, RecursionAvailable: true}, Questions: m.Questions}
	if udp && s.truncate[name] {
		resp.Truncated = true
	} else {
		records, ok := s.zone[name]
		if !ok {
			resp.RCode = dnsmessage.RCodeNameError
		}
		// Include the CNAME chain and the records of the asked type.
		for hops := 0; ok && hops < 10; hops++ {
			var next string
			for _, r := range records {
				switch b := r.Body.(type) {
				case *dnsmessage.CNAMEResource:
					resp.Answers = append(resp.Answers, r)
					next = strings.ToLower(b.CNAME.String())
				case *dnsmessage.AResource:
					if q.Type == dnsmessage.TypeA {
						resp.Answers = append(resp.Answers, r)
					}
				case *dnsmessage.AAAAResource:
					if q.Type == dnsmessage.TypeAAAA {
						resp.Answers = append(resp.Answers, r)
					}
				}
			}
			if next == "" {
				break
			}
			records, ok = s.zone[next]
		}
	}
	out, _ := resp.Pack()
	return out, m.ID
}

func TestStubResolver(t *testing.T) {
	dns := newFakeDNS(t)
	dns.add(
		rr("a.test.", 300, &dnsmessage.AResource{A: [4]byte{192, 0, 2, 1}}),
		rr("a.test.", 120, &dnsmessage.AAAAResource{AAAA: netip.MustParseAddr("2001:db8::1").As16()}),
		rr("www.b.test.", 60, &dnsmessage.CNAMEResource{CNAME: dnsmessage.MustNewName("cdn.c.test.")}),
		rr("cdn.c.test.", 600, &dnsmessage.AResource{A: [4]byte{192, 0, 2, 7}}),
		rr("big.test.", 90, &dnsmessage.AResource{A: [4]byte{192, 0, 2, 9}}),
		rr("v6only.test.", 45, &dnsmessage.AAAAResource{AAAA: netip.MustParseAddr("2001:db8::6").As16()}),
	)
	dns.mu.Lock()
	dns.truncate["big.test."] = true
	dns.mu.Unlock()
	r := &StubResolver{Servers: []string{dns.addr}, Timeout: time.Second}
	ctx := context.Background()

	cases := []struct {
		host  string
		addrs string
		ttl   time.Duration
	}{
		{"a.test", "192.0.2.1 2001:db8::1", 120 * time.Second}, // the smaller TTL of A and AAAA
		{"WWW.b.test.", "192.0.2.7", 60 * time.Second},         // CNAME's TTL bounds the answer
		{"big.test", "192.0.2.9", 90 * time.Second},            // truncated over UDP, answered over TCP
		{"v6only.test", "2001:db8::6", 45 * time.Second},       // NODATA for A
	}
	for _, c := range cases {
		addrs, ttl, err := r.Resolve(ctx, c.host)
		var got []string
		for _, a := range addrs {
			got = append(got, a.String())
		}
		if err != nil || strings.Join(got, " ") != c.addrs || ttl != c.ttl {
			t.Errorf("Resolve(%s) = %v, %v, %v; want %s, %v", c.host, got, ttl, err, c.addrs, c.ttl)
		}
	}
	if dns.tcpQueries.Load() == 0 {
		t.Error("truncated answer was not retried over TCP")
	}
	_, _, err := r.Resolve(ctx, "missing.test")
	var de *net.DNSError
	if !errors.As(err, &de) || !de.IsNotFound {
		t.Errorf("missing name: err = %v, want not found", err)
	}

	// A datagram with the wrong ID is ignored; the real answer is used.
	dns.spoofFirst.Store(true)
	if addrs, _, err := r.Resolve(ctx, "a.test"); err != nil || len(addrs) != 2 {
		t.Errorf("with a spoofed datagram first: %v, %v", addrs, err)
	}
}

func TestStubResolverFeedsDNSCacheTTL(t *testing.T) {
	dns := newFakeDNS(t)
	dns.add(rr("a.test.", 90, &dnsmessage.AResource{A: [4]byte{192, 0, 2, 1}}))
	clock := newFakeClock()
	c := NewDNSCache(DNSConfig{Resolver: &StubResolver{Servers: []string{dns.addr}}, Now: clock.Now})
	defer c.Close()
	ctx := context.Background()
	c.Lookup(ctx, "a.test")
	clock.Advance(89 * time.Second)
	c.Lookup(ctx, "a.test")
	before := dns.queries.Load()
	clock.Advance(time.Second)
	c.Lookup(ctx, "a.test")
	if dns.queries.Load() == before {
		t.Fatal("record TTL of 90 s did not expire the cache entry")
	}
}

func TestStubResolverUnreachableServer(t *testing.T) {
	// A UDP socket that never answers: the query times out per attempt.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	r := &StubResolver{Servers: []string{pc.LocalAddr().String()}, Timeout: 20 * time.Millisecond, Attempts: 2}
	_, _, err = r.Resolve(context.Background(), "a.test")
	var de *net.DNSError
	if !errors.As(err, &de) || !de.IsTemporary {
		t.Fatalf("err = %v, want a temporary DNSError", err)
	}
}

func TestSystemNameservers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "resolv.conf")
	os.WriteFile(path, []byte("# comment\nsearch example.com\nnameserver 192.0.2.53\nnameserver ::1\nnameserver bogus\noptions ndots:1\n"), 0o600)
	got, err := systemNameservers(path)
	if err != nil || strings.Join(got, " ") != "192.0.2.53:53 [::1]:53" {
		t.Fatalf("got %v, %v", got, err)
	}
	os.WriteFile(path, []byte("search example.com\n"), 0o600)
	if _, err := systemNameservers(path); !errors.Is(err, errNoServers) {
		t.Fatalf("no nameservers: %v", err)
	}
}

// FuzzAnswerAddrs feeds arbitrary DNS responses to the answer parsing: it
// must not panic, and must return addresses only with a TTL bound by the
// records'.
func FuzzAnswerAddrs(f *testing.F) {
	s := &fakeDNS{zone: map[string][]dnsmessage.Resource{}, truncate: map[string]bool{}}
	s.add(
		rr("www.b.test.", 60, &dnsmessage.CNAMEResource{CNAME: dnsmessage.MustNewName("cdn.c.test.")}),
		rr("cdn.c.test.", 600, &dnsmessage.AResource{A: [4]byte{192, 0, 2, 7}}),
	)
	q, _ := (&dnsmessage.Message{Questions: []dnsmessage.Question{{Name: dnsmessage.MustNewName("www.b.test."), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}}}).Pack()
	resp, _ := s.answer(q, false)
	f.Add(resp)
	f.Add([]byte{0, 1, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0})
	name := dnsmessage.MustNewName("www.b.test.")
	f.Fuzz(func(t *testing.T, data []byte) {
		var m dnsmessage.Message
		if m.Unpack(data) != nil {
			return
		}
		addrs, ttl, err := answerAddrs(&m, name, dnsmessage.TypeA)
		if err == nil && (len(addrs) == 0 || ttl < 0 || ttl > (1<<32)*time.Second) {
			t.Fatalf("addrs %v ttl %v", addrs, ttl)
		}
	})
}

// TestStubResolverCachesResolvConf checks that a StubResolver without
// Servers reads resolv.conf once, not per lookup, and again once it is 5 s
// old on its clock, keeping the servers it has if that read fails. Every
// server address is dialled as the loopback fake DNS server.
func TestStubResolverCachesResolvConf(t *testing.T) {
	dns := newFakeDNS(t)
	dns.add(rr("a.test.", 300, &dnsmessage.AResource{A: [4]byte{192, 0, 2, 1}}))
	conf := filepath.Join(t.TempDir(), "resolv.conf")
	useServer := func(ip string) {
		if err := os.WriteFile(conf, []byte("nameserver "+ip+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	dialled := map[string]bool{}
	clock := newFakeClock()
	r := &StubResolver{Now: clock.Now, confPath: conf, Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dialled[addr] = true
		mu.Unlock()
		var d net.Dialer
		return d.DialContext(ctx, network, dns.addr)
	}}
	resolveVia := func(when string, want string) {
		t.Helper()
		mu.Lock()
		clear(dialled)
		mu.Unlock()
		if _, _, err := r.Resolve(context.Background(), "a.test"); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(dialled) != 1 || !dialled[want] {
			t.Errorf("%s: asked %v, want %s", when, dialled, want)
		}
	}
	useServer("192.0.2.53")
	resolveVia("first lookup", "192.0.2.53:53")
	useServer("192.0.2.54")
	clock.Advance(4 * time.Second)
	resolveVia("4 s later", "192.0.2.53:53")
	clock.Advance(time.Second)
	resolveVia("5 s later", "192.0.2.54:53")
	if err := os.Remove(conf); err != nil {
		t.Fatal(err)
	}
	clock.Advance(5 * time.Second)
	resolveVia("resolv.conf gone", "192.0.2.54:53")

	// Without servers from the start, the error says so.
	empty := &StubResolver{Now: clock.Now, confPath: conf}
	if _, _, err := empty.Resolve(context.Background(), "a.test"); !errors.Is(err, errNoServers) {
		t.Errorf("no resolv.conf: err = %v, want errNoServers", err)
	}
}
