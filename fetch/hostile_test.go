package fetch

// Probes of hostile servers: each case checks that the fetch ends (servers
// that would go on forever are cut by the configured bounds) with the
// documented sentinel, reads a bounded
// number of bytes from the socket and is not retried when the failure is
// deterministic.

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// hostileServer is a raw TCP server on loopback whose handler gets each
// connection; it counts connections (one per attempt unless kept alive).
type hostileServer struct {
	ln    net.Listener
	conns atomic.Int32
	read  atomic.Int64 // bytes the client read from its connections
	done  chan struct{}
	wg    sync.WaitGroup
}

func newHostileServer(t *testing.T, handle func(s *hostileServer, c net.Conn)) *hostileServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &hostileServer{ln: ln, done: make(chan struct{})}
	var mu sync.Mutex
	var open []net.Conn
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			mu.Lock()
			open = append(open, c)
			mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				handle(s, c)
			}()
		}
	}()
	t.Cleanup(func() {
		close(s.done)
		ln.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		s.wg.Wait()
	})
	return s
}

// Dial connects to the server whatever address is asked for and counts the
// bytes the client reads.
func (s *hostileServer) Dial(ctx context.Context, network, _ string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, s.ln.Addr().String())
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, n: &s.read}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// readRequest reads one request's header from c.
func readRequest(c net.Conn) (*http.Request, *bufio.Reader, error) {
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	return req, br, err
}

// writeForever writes chunk to c until it fails or the server stops.
func (s *hostileServer) writeForever(c net.Conn, chunk []byte, every time.Duration) {
	for {
		if _, err := c.Write(chunk); err != nil {
			return
		}
		if every > 0 {
			select {
			case <-s.done:
				return
			case <-time.After(every):
			}
		}
	}
}

// hang blocks until the server stops or the client goes away.
func (s *hostileServer) hang(c net.Conn) {
	go func() { io.Copy(io.Discard, c) }()
	<-s.done
}

// hostileConfig is a Fetcher configuration with small limits. Its
// timeouts are generous, seconds, so that a loaded machine never turns a
// case that expects another outcome into a timeout; the cases that expect
// a timeout shorten them with quickTimeouts.
func hostileConfig(c *Config) {
	c.ConnectTimeout = 2 * time.Second
	c.TLSTimeout = 2 * time.Second
	c.HeaderTimeout = 2 * time.Second
	c.Timeout = 10 * time.Second
	c.MinTransferRate = 64 << 10
	c.TransferRateWindow = time.Second
	c.MaxBodyBytes = 64 << 10
	c.MaxHeaderBytes = 4 << 10
	c.MaxExpansion = 50
	c.ExpansionFloor = 16 << 10
	c.MaxRetries = 2
	c.RetryBackoff = time.Millisecond
	c.MaxRetryBackoff = time.Millisecond
}

// quickTimeouts shortens the timeouts a hostile server that never finishes
// runs into, for the cases that expect ErrTimeout: such a server never
// answers in time, however loaded the machine.
func quickTimeouts(c *Config) {
	c.TLSTimeout = 100 * time.Millisecond
	c.HeaderTimeout = 100 * time.Millisecond
	c.Timeout = 2 * time.Second
	c.TransferRateWindow = 50 * time.Millisecond
}

func newHostileFetcher(t *testing.T, s *hostileServer, mod func(*Config)) *Fetcher {
	t.Helper()
	return newTestFetcher(t, nil, func(c *Config) {
		hostileConfig(c)
		if s != nil {
			c.DialContext = s.Dial
		}
		if mod != nil {
			mod(c)
		}
	})
}

// fetchWithin fetches u and fails the test if the fetch is still running
// after limit: seconds, far above the tens of milliseconds the configured
// bounds allow, so that only a fetch those bounds failed to end (a hang on
// a server that would go on forever) trips it, never a slow machine.
func fetchWithin(t *testing.T, f *Fetcher, u string, limit time.Duration) (*Response, error) {
	t.Helper()
	type result struct {
		resp *Response
		err  error
	}
	ch := make(chan result, 1)
	start := time.Now()
	go func() {
		resp, err := f.Fetch(context.Background(), u)
		ch <- result{resp, err}
	}()
	select {
	case r := <-ch:
		t.Logf("fetch took %v: err %v", time.Since(start).Round(time.Millisecond), r.err)
		return r.resp, r.err
	case <-time.After(limit):
		t.Fatalf("fetch of %s still running after %v", u, limit)
		return nil, nil
	}
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("err = %v, want %v", err, target)
	}
}

func wantConns(t *testing.T, s *hostileServer, n int32) {
	t.Helper()
	if got := s.conns.Load(); got != n {
		t.Errorf("server saw %d connections, want %d", got, n)
	}
}

// ---- headers, HTTP/1.1 ----

func TestHostileEndlessHeaderLines(t *testing.T) {
	s := newHostileServer(t, func(s *hostileServer, c net.Conn) {
		readRequest(c)
		io.WriteString(c, "HTTP/1.1 200 OK\r\n")
		s.writeForever(c, []byte("X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n"), 0)
	})
	f := newHostileFetcher(t, s, nil)
	_, err := fetchWithin(t, f, "http://h.test/", 5*time.Second)
	wantErr(t, err, ErrHeadersTooLarge)
	wantConns(t, s, 1)
	if n := s.read.Load(); n > 4<<10+64<<10 {
		t.Errorf("read %d bytes for a 4 KiB header limit", n)
	}
}

func TestHostileEnormousHeaderLine(t *testing.T) {
	s := newHostileServer(t, func(s *hostileServer, c net.Conn) {
		readRequest(c)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Big: ")
		s.writeForever(c, bytes.Repeat([]byte("a"), 4096), 0)
	})
	f := newHostileFetcher(t, s, nil)
	_, err := fetchWithin(t, f, "http://h.test/", 5*time.Second)
	wantErr(t, err, ErrHeadersTooLarge)
	wantConns(t, s, 1)
	if n := s.read.Load(); n > 4<<10+64<<10 {
		t.Errorf("read %d bytes for a 4 KiB header limit", n)
	}
}

func TestHostileSlowlorisHeaders(t *testing.T) {
	s := newHostileServer(t, func(s *hostileServer, c net.Conn) {
		readRequest(c)
		io.WriteString(c, "HTTP/1.1 200 OK\r\n")
		s.writeForever(c, []byte("X"), 5*time.Millisecond)
	})
	f := newHostileFetcher(t, s, func(c *Config) { quickTimeouts(c); c.MaxRetries = -1 })
	_, err := fetchWithin(t, f, "http://h.test/", 10*time.Second)
	wantErr(t, err, ErrTimeout)
}

// ---- headers, HTTP/2 ----

func newH2Server(t *testing.T, h http.HandlerFunc) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = nil
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// TestHostileH2HeadersTooLarge: an HTTP/2 header block over MaxHeaderBytes
// that arrives in one frame is ErrHeadersTooLarge and is not retried. A
// larger block (several frames) or one field over the limit ends the
// connection with a PROTOCOL_ERROR or COMPRESSION_ERROR that net/http does
// not tell apart from other framing errors; those must still fail fast.
func TestHostileH2HeadersTooLarge(t *testing.T) {
	for _, tc := range []struct {
		name    string
		set     func(h http.Header)
		typed   bool
		maxHits int32
	}{
		{"one-frame", func(h http.Header) {
			for i := range 5 {
				h.Set(fmt.Sprint("X-Filler-", i), strings.Repeat("x", 1000))
			}
		}, true, 1},
		{"many-frames", func(h http.Header) {
			for i := range 200 {
				h.Add("X-Filler", fmt.Sprintf("%d-%s", i, strings.Repeat("x", 200)))
			}
		}, false, 3},
		{"one-enormous-field", func(h http.Header) { h.Set("X-Big", strings.Repeat("b", 64<<10)) }, false, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hits atomic.Int32
			srv := newH2Server(t, func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				tc.set(w.Header())
				io.WriteString(w, "ok")
			})
			f := newTestFetcher(t, nil, func(c *Config) {
				hostileConfig(c)
				c.Client = srv.Client()
			})
			_, err := fetchWithin(t, f, srv.URL+"/", 5*time.Second)
			if tc.typed {
				wantErr(t, err, ErrHeadersTooLarge)
			} else if err == nil {
				t.Fatal("oversized header block accepted")
			}
			if n := hits.Load(); n > tc.maxHits {
				t.Errorf("%d requests, want at most %d", n, tc.maxHits)
			}
		})
	}
}

func TestHostileH2SlowHeaders(t *testing.T) {
	stop := make(chan struct{})
	srv := newH2Server(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	})
	defer close(stop)
	f := newTestFetcher(t, nil, func(c *Config) {
		hostileConfig(c)
		quickTimeouts(c)
		c.Client = srv.Client()
		c.MaxRetries = -1
	})
	_, err := fetchWithin(t, f, srv.URL+"/", 10*time.Second)
	wantErr(t, err, ErrTimeout)
}

// ---- bodies ----

func TestHostileContentLengthLongerThanBody(t *testing.T) {
	s := newHostileServer(t, func(s *hostileServer, c net.Conn) {
		readRequest(c)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\nonly a little")
		s.hang(c)
	})
	f := newHostileFetcher(t, s, func(c *Config) { quickTimeouts(c); c.MaxRetries = -1 })
	_, err := fetchWithin(t, f, "http://h.test/", 10*time.Second)
	wantErr(t, err, ErrTimeout)
}

func TestHostileBodyLongerThanContentLength(t *testing.T) {
	s := newHostileServer(t, func(s *hostileServer, c net.Conn) {
		br := bufio.NewReader(c)
		for {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.1 999 JUNK\r\n\r\nmore junk")
		}
	})
	f := newHostileFetcher(t, s, nil)
	resp, err := fetchWithin(t, f, "http://h.test/", 5*time.Second)
	if err != nil || string(resp.Body) != "hello" {
		t.Fatalf("first fetch: %v %+v, want the 5 bytes of Content-Length", err, resp)
	}
	// The bytes past Content-Length poison the connection. net/http drops
	// it if they arrive while it is idle, but if the next request is sent
	// on it first, its answer is read from the junk ("999", then a body
	// that never ends): that fetch must end, with an error, and never hand
	// the junk on as a page.
	for i := 1; i < 3; i++ {
		resp, err := fetchWithin(t, f, "http://h.test/", 10*time.Second)
		if err == nil && string(resp.Body) != "hello" {
			t.Fatalf("fetch %d: status %d, body %q; want the 5 bytes of Content-Length or an error", i, resp.StatusCode, resp.Body)
		}
	}
}

func TestHostileEndlessChunkedBody(t *testing.T) {
	for _, policy := range []TooLarge{Truncate, Fail} {
		t.Run(fmt.Sprint(policy), func(t *testing.T) {
			s := newHostileServer(t, func(s *hostileServer, c net.Conn) {
				readRequest(c)
				io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
				s.writeForever(c, []byte("1000\r\n"+strings.Repeat("z", 0x1000)+"\r\n"), 0)
			})
			f := newHostileFetcher(t, s, func(c *Config) { c.OnTooLarge = policy })
			resp, err := fetchWithin(t, f, "http://h.test/", 5*time.Second)
			if policy == Fail {
				wantErr(t, err, ErrBodyTooLarge)
			} else if err != nil || !resp.Truncated || len(resp.Body) != 64<<10 {
				t.Fatalf("err %v; want a truncated 64 KiB body", err)
			}
			wantConns(t, s, 1)
			if n := s.read.Load(); n > 64<<10+128<<10 {
				t.Errorf("read %d bytes for a 64 KiB body limit", n)
			}
		})
	}
}

func TestHostileSlowDripBody(t *testing.T) {
	s := newHostileServer(t, func(s *hostileServer, c net.Conn) {
		readRequest(c)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
		s.writeForever(c, []byte("d"), 2*time.Millisecond)
	})
	f := newHostileFetcher(t, s, func(c *Config) { quickTimeouts(c); c.MaxRetries = -1 })
	_, err := fetchWithin(t, f, "http://h.test/", 10*time.Second)
	wantErr(t, err, ErrTimeout)
}

func TestHostileBodyOverLimit(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 16<<10) // 256 KiB
	for _, policy := range []TooLarge{Truncate, Fail} {
		for _, cl := range []bool{true, false} {
			t.Run(fmt.Sprint(policy, cl), func(t *testing.T) {
				s := newHostileServer(t, func(_ *hostileServer, c net.Conn) {
					readRequest(c)
					if cl {
						fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", len(big))
					} else {
						io.WriteString(c, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
					}
					c.Write(big)
				})
				f := newHostileFetcher(t, s, func(c *Config) { c.OnTooLarge = policy })
				resp, err := fetchWithin(t, f, "http://h.test/", 5*time.Second)
				if policy == Fail {
					wantErr(t, err, ErrBodyTooLarge)
				} else if err != nil || !resp.Truncated || !bytes.Equal(resp.Body, big[:64<<10]) {
					t.Fatalf("err %v; want the first 64 KiB, truncated", err)
				}
				wantConns(t, s, 1)
			})
		}
	}
}

// ---- compression ----

func compress(t *testing.T, coding string, data []byte) []byte {
	var b bytes.Buffer
	var w io.WriteCloser
	switch coding {
	case "gzip":
		w, _ = gzip.NewWriterLevel(&b, gzip.DefaultCompression)
	case "deflate":
		w, _ = zlib.NewWriterLevel(&b, zlib.DefaultCompression)
	case "rawdeflate":
		w, _ = flate.NewWriter(&b, flate.DefaultCompression)
	case "br":
		w = brotli.NewWriterLevel(&b, brotli.DefaultCompression)
	case "zstd":
		zw, err := zstd.NewWriter(&b, zstd.WithWindowSize(1<<20))
		if err != nil {
			t.Fatal(err)
		}
		w = zw
	default:
		t.Fatalf("coding %q", coding)
	}
	w.Write(data)
	w.Close()
	return b.Bytes()
}

// encodedServer serves body with the given Content-Encoding on every
// request and counts requests.
func encodedServer(t *testing.T, coding string, body []byte) (*hostileServer, *atomic.Int32) {
	var hits atomic.Int32
	s := newHostileServer(t, func(_ *hostileServer, c net.Conn) {
		br := bufio.NewReader(c)
		for {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			hits.Add(1)
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: %s\r\nContent-Length: %d\r\n\r\n", coding, len(body))
			c.Write(body)
		}
	})
	return s, &hits
}

func TestHostileCompressionBombs(t *testing.T) {
	zeros := make([]byte, 1<<20)
	for _, coding := range []string{"gzip", "deflate", "rawdeflate", "br", "zstd"} {
		t.Run(coding, func(t *testing.T) {
			bomb := compress(t, coding, zeros)
			label := coding
			if coding == "rawdeflate" {
				label = "deflate"
			}
			s, hits := encodedServer(t, label, bomb)
			f := newHostileFetcher(t, s, func(c *Config) { c.MaxBodyBytes = 4 << 20 })
			_, err := fetchWithin(t, f, "http://h.test/", 5*time.Second)
			wantErr(t, err, ErrDecompressionBomb)
			if n := hits.Load(); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

func TestHostileNestedEncodings(t *testing.T) {
	body := []byte("<html>hello</html>")
	for range 4 {
		body = compress(t, "gzip", body)
	}
	s, hits := encodedServer(t, "gzip, gzip, gzip, gzip", body)
	f := newHostileFetcher(t, s, nil)
	_, err := fetchWithin(t, f, "http://h.test/", 5*time.Second)
	wantErr(t, err, ErrUnsupportedEncoding)
	if n := hits.Load(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}

	// Three nested layers are decoded, and a nested bomb is still a bomb.
	bomb := make([]byte, 2<<20)
	for range 3 {
		bomb = compress(t, "gzip", bomb)
	}
	s, hits = encodedServer(t, "gzip, gzip, gzip", bomb)
	f = newHostileFetcher(t, s, func(c *Config) { c.MaxBodyBytes = 4 << 20 })
	_, err = fetchWithin(t, f, "http://h.test/", 5*time.Second)
	wantErr(t, err, ErrDecompressionBomb)
	if n := hits.Load(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestHostileLyingEncoding(t *testing.T) {
	plain := []byte("<html><body>" + strings.Repeat("plain text, not compressed. ", 50) + "</body></html>")
	for _, coding := range []string{"gzip", "deflate", "br", "zstd"} {
		t.Run(coding, func(t *testing.T) {
			s, hits := encodedServer(t, coding, plain)
			f := newHostileFetcher(t, s, nil)
			_, err := fetchWithin(t, f, "http://h.test/", 5*time.Second)
			wantErr(t, err, ErrBadEncoding)
			if n := hits.Load(); n != 1 {
				t.Errorf("%d requests, want 1 (a body that does not decode is not retried)", n)
			}
		})
	}
}

// TestHostileTrailingJunk: bytes after a complete brotli or zstd stream are
// ignored, as Chromium ignores them and as the Fetcher ignores them after a
// gzip stream; junk that starts like another zstd frame must be one.
func TestHostileTrailingJunk(t *testing.T) {
	page := []byte("<html><body>" + strings.Repeat("compressed page. ", 50) + "</body></html>")
	for _, coding := range []string{"br", "zstd"} {
		for _, junk := range []string{"\n", "\r\n", "\x00\x00\x00\x00\x00\x00", "<html>error page</html>"} {
			t.Run(fmt.Sprintf("%s/%q", coding, junk), func(t *testing.T) {
				body := append(compress(t, coding, page), junk...)
				s, hits := encodedServer(t, coding, body)
				f := newHostileFetcher(t, s, nil)
				resp, err := fetchWithin(t, f, "http://h.test/", 5*time.Second)
				if err != nil || !bytes.Equal(resp.Body, page) {
					t.Fatalf("err %v; want the page, trailing junk ignored", err)
				}
				if n := hits.Load(); n != 1 {
					t.Errorf("%d requests, want 1", n)
				}
			})
		}
	}
	// Two zstd frames are one body; a second frame that is corrupt fails.
	two := append(compress(t, "zstd", page), compress(t, "zstd", page)...)
	s, _ := encodedServer(t, "zstd", two)
	f := newHostileFetcher(t, s, nil)
	resp, err := fetchWithin(t, f, "http://h.test/", 5*time.Second)
	if err != nil || !bytes.Equal(resp.Body, append(append([]byte{}, page...), page...)) {
		t.Fatalf("two frames: err %v", err)
	}
	second := compress(t, "zstd", page)
	bad := append(compress(t, "zstd", page), second[:len(second)/2]...)
	s, hits := encodedServer(t, "zstd", bad)
	f = newHostileFetcher(t, s, nil)
	_, err = fetchWithin(t, f, "http://h.test/", 5*time.Second)
	wantErr(t, err, ErrBadEncoding)
	if n := hits.Load(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// TestHostileIncompressibleOverLimit: an encoded body whose wire size alone
// is over MaxBodyBytes stops at the limit with the configured policy for
// every coding (the wire limit must not surface as a decoder error).
func TestHostileIncompressibleOverLimit(t *testing.T) {
	noise := make([]byte, 160<<10)
	rng := uint64(1)
	for i := range noise {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		noise[i] = byte(rng)
	}
	for _, coding := range []string{"gzip", "deflate", "rawdeflate", "br", "zstd"} {
		for _, policy := range []TooLarge{Truncate, Fail} {
			t.Run(fmt.Sprint(coding, policy), func(t *testing.T) {
				label := coding
				if coding == "rawdeflate" {
					label = "deflate"
				}
				s, hits := encodedServer(t, label, compress(t, coding, noise))
				f := newHostileFetcher(t, s, func(c *Config) { c.OnTooLarge = policy })
				resp, err := fetchWithin(t, f, "http://h.test/", 5*time.Second)
				if policy == Fail {
					wantErr(t, err, ErrBodyTooLarge)
				} else if err != nil || !resp.Truncated || !bytes.Equal(resp.Body, noise[:len(resp.Body)]) || len(resp.Body) > 64<<10 {
					t.Fatalf("err %v; want a truncated prefix", err)
				}
				if n := hits.Load(); n != 1 {
					t.Errorf("%d requests, want 1", n)
				}
			})
		}
	}
}

// TestHostileTruncatedEncodedBody: a compressed stream cut short inside a
// complete HTTP body (chunked) is the server's doing and not retried; cut
// short in a body delimited by the connection closing, it may be the
// connection's, and is retried.
func TestHostileTruncatedEncodedBody(t *testing.T) {
	page := []byte("<html><body>" + strings.Repeat("compressed page. ", 500) + "</body></html>")
	gz := compress(t, "gzip", page)
	cut := gz[:len(gz)/2]
	for _, tc := range []struct {
		name  string
		write func(c net.Conn)
		conns int32
		want  error
	}{
		{"chunked", func(c net.Conn) {
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(cut), cut)
		}, 1, ErrBadEncoding},
		{"content-length", func(c net.Conn) {
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s", len(cut), cut)
		}, 1, ErrBadEncoding},
		{"close-delimited", func(c net.Conn) {
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nConnection: close\r\n\r\n%s", cut)
		}, 3, nil},
		{"connection-cut-before-content-length", func(c net.Conn) {
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s", len(gz), cut)
		}, 3, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newHostileServer(t, func(_ *hostileServer, c net.Conn) {
				readRequest(c)
				tc.write(c)
			})
			f := newHostileFetcher(t, s, nil)
			_, err := fetchWithin(t, f, "http://h.test/", 5*time.Second)
			if err == nil {
				t.Fatal("truncated body accepted")
			}
			if tc.want != nil {
				wantErr(t, err, tc.want)
			} else if errors.Is(err, ErrBadEncoding) {
				t.Errorf("err = %v: the connection's failure blamed on the body", err)
			}
			wantConns(t, s, tc.conns)
		})
	}
}

// ---- redirects ----

func redirectServer(t *testing.T, h func(path string) string) (*hostileServer, *atomic.Int32) {
	var hits atomic.Int32
	s := newHostileServer(t, func(_ *hostileServer, c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			hits.Add(1)
			loc := h(req.URL.Path)
			if loc == "" {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				continue
			}
			fmt.Fprintf(c, "HTTP/1.1 302 Found\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n", loc)
		}
	})
	return s, &hits
}

func TestHostileRedirectLoops(t *testing.T) {
	for name, h := range map[string]func(string) string{
		"a-b-a": func(p string) string {
			if p == "/a" {
				return "/b"
			}
			return "/a"
		},
		"self": func(p string) string { return p },
	} {
		t.Run(name, func(t *testing.T) {
			s, hits := redirectServer(t, h)
			f := newHostileFetcher(t, s, func(c *Config) { c.MaxRedirects = 3 })
			_, err := fetchWithin(t, f, "http://h.test/a", 5*time.Second)
			wantErr(t, err, ErrTooManyRedirects)
			if n := hits.Load(); n != 4 {
				t.Errorf("%d requests, want 4 (not retried)", n)
			}
		})
	}
}

func TestHostileRedirectBadTargets(t *testing.T) {
	for _, tc := range []struct {
		loc  string
		want error
	}{
		{"ftp://h.test/file", ErrUnsupportedScheme},
		{"javascript:alert(1)", ErrUnsupportedScheme},
		{"file:///etc/passwd", ErrUnsupportedScheme},
		{"data:text/html,hi", ErrUnsupportedScheme},
	} {
		t.Run(tc.loc, func(t *testing.T) {
			s, hits := redirectServer(t, func(string) string { return tc.loc })
			f := newHostileFetcher(t, s, nil)
			_, err := fetchWithin(t, f, "http://h.test/a", 5*time.Second)
			wantErr(t, err, tc.want)
			if n := hits.Load(); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

func TestHostileRedirectEnormousLocation(t *testing.T) {
	// Over the header limit: refused as such.
	s, hits := redirectServer(t, func(string) string { return "/" + strings.Repeat("a", 8<<10) })
	f := newHostileFetcher(t, s, nil)
	_, err := fetchWithin(t, f, "http://h.test/a", 5*time.Second)
	wantErr(t, err, ErrHeadersTooLarge)
	if n := hits.Load(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	// Within the header limit but unparsable: the error says so briefly.
	s, hits = redirectServer(t, func(string) string { return "http://[" + strings.Repeat("x", 3<<10) })
	f = newHostileFetcher(t, s, nil)
	_, err = fetchWithin(t, f, "http://h.test/a", 5*time.Second)
	if err == nil {
		t.Fatal("bad Location followed")
	}
	if len(err.Error()) > 1024 {
		t.Errorf("error of %d bytes quotes the whole Location", len(err.Error()))
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("%d requests, want 1 (a bad Location is not retried)", n)
	}
}

func TestHostileRedirectDotSegments(t *testing.T) {
	var got []string
	var mu sync.Mutex
	s, _ := redirectServer(t, func(p string) string {
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
		if p == "/x/y/z" {
			return "../../a/./b/../c/%2e%2E/d"
		}
		return ""
	})
	f := newHostileFetcher(t, s, nil)
	resp, err := fetchWithin(t, f, "http://h.test/x/y/z", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if resp.FinalURL.Path != "/a/d" {
		t.Errorf("final path %q, want /a/d (requests %q)", resp.FinalURL.Path, got)
	}
}

// TestHostileRedirectUnparsableByGo: a Location that Go's url.Parse refuses
// but browsers follow (an invalid percent escape) is followed, resolved as
// browsers resolve it.
func TestHostileRedirectUnparsableByGo(t *testing.T) {
	s, hits := redirectServer(t, func(p string) string {
		if p == "/a" {
			return "/b%zz?q=1"
		}
		return ""
	})
	f := newHostileFetcher(t, s, nil)
	resp, err := fetchWithin(t, f, "http://h.test/a", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.FinalURL.Path; got != "/b%zz" || len(resp.Redirects) != 1 || resp.Redirects[0].Header.Get("Location") != "/b%zz?q=1" {
		t.Errorf("final path %q, redirects %+v", got, resp.Redirects)
	}
	if n := hits.Load(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

// ---- connection ----

func TestHostileSilentServer(t *testing.T) {
	s := newHostileServer(t, func(s *hostileServer, c net.Conn) { s.hang(c) })
	f := newHostileFetcher(t, s, func(c *Config) { quickTimeouts(c); c.MaxRetries = -1 })
	_, err := fetchWithin(t, f, "http://h.test/", 10*time.Second)
	wantErr(t, err, ErrTimeout)
}

func TestHostileCloseMidHeaders(t *testing.T) {
	s := newHostileServer(t, func(_ *hostileServer, c net.Conn) {
		readRequest(c)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Ty")
	})
	f := newHostileFetcher(t, s, nil)
	_, err := fetchWithin(t, f, "http://h.test/", 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "h.test") {
		t.Fatalf("err = %v, want an error naming the URL", err)
	}
	wantConns(t, s, 3) // transient: retried twice
}

func TestHostileConnectionReset(t *testing.T) {
	s := newHostileServer(t, func(_ *hostileServer, c net.Conn) {
		readRequest(c)
		c.(*net.TCPConn).SetLinger(0)
	})
	f := newHostileFetcher(t, s, nil)
	_, err := fetchWithin(t, f, "http://h.test/", 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "h.test") {
		t.Fatalf("err = %v, want an error naming the URL", err)
	}
	wantConns(t, s, 3)
}

func TestHostileTLSHandshakeNeverCompletes(t *testing.T) {
	s := newHostileServer(t, func(s *hostileServer, c net.Conn) { s.hang(c) })
	f := newHostileFetcher(t, s, func(c *Config) {
		quickTimeouts(c)
		c.MaxRetries = -1
		c.HeaderTimeout = 10 * time.Second
		c.Timeout = 10 * time.Second
	})
	_, err := fetchWithin(t, f, "https://h.test/", 10*time.Second)
	wantErr(t, err, ErrTimeout)
}

// TestDecoderTrailingJunkSeparateReads: trailing bytes that arrive in a read
// of their own after a complete stream are ignored too, for every frame
// layout of zstd (checksum or not, single segment, skippable frames).
func TestDecoderTrailingJunkSeparateReads(t *testing.T) {
	page := []byte("<html><body>" + strings.Repeat("compressed page. ", 50) + "</body></html>")
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(false))
	if err != nil {
		t.Fatal(err)
	}
	single := enc.EncodeAll(page, nil) // single segment, no checksum
	skippable := append([]byte{0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 'a', 'b', 'c'}, single...)
	for _, tc := range []struct {
		coding string
		stream []byte
	}{
		{"br", compress(t, "br", page)},
		{"zstd", compress(t, "zstd", page)},
		{"zstd", single},
		{"zstd", skippable},
		{"zstd", append(append([]byte{}, single...), compress(t, "zstd", []byte{})...)},
	} {
		for _, junk := range []string{"\n", "\x00\x00", "not a frame"} {
			r := io.MultiReader(bytes.NewReader(tc.stream), strings.NewReader(junk))
			dec, closeDec, err := decoder(r, []string{tc.coding})
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(dec)
			closeDec()
			if err != nil || !bytes.Equal(got, page) {
				t.Errorf("%s %q: err %v, %d bytes; want the page", tc.coding, junk, err, len(got))
			}
		}
		// Cut short: an error, not a page.
		dec, closeDec, err := decoder(bytes.NewReader(tc.stream[:len(tc.stream)-2]), []string{tc.coding})
		if err == nil {
			_, err = io.ReadAll(dec)
			closeDec()
		}
		if err == nil {
			t.Errorf("%s cut short: no error", tc.coding)
		}
	}
}
