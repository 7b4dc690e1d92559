package dashboard_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dashboard"
)

// TestSampleAtConcurrentWithSampler calls SampleAt while the sampler runs.
// The Source is promised calls from one goroutine at a time, so a source
// that keeps unsynchronized state must be safe (the race detector tells).
func TestSampleAtConcurrentWithSampler(t *testing.T) {
	fetched := int64(0) // deliberately unsynchronized
	src := func() dashboard.Snapshot {
		fetched++
		return dashboard.Snapshot{URLs: dashboard.URLCounts{Fetched: fetched}}
	}
	d, err := dashboard.New(dashboard.Config{Source: src, Interval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				d.SampleAt(t0.Add(time.Duration(g*1000+i) * time.Millisecond))
			}
		}()
	}
	wg.Wait()
	d.Close()
	// Every call was counted: none was lost to a racing increment.
	snap, _ := d.Snapshot()
	if snap.URLs.Fetched < 400 {
		t.Fatalf("last snapshot has %d fetched after 400 manual samples", snap.URLs.Fetched)
	}
}

// trackingListener sets small socket buffers on the connections it accepts,
// so that a client that does not read blocks the server's writes after a
// few kilobytes, and counts the bytes the server began to write and wrote.
type trackingListener struct {
	net.Listener
	started, written atomic.Int64
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(8 << 10)
	}
	return &trackingConn{Conn: c, l: l}, nil
}

type trackingConn struct {
	net.Conn
	l *trackingListener
}

func (c *trackingConn) Write(p []byte) (int, error) {
	c.l.started.Add(int64(len(p)))
	n, err := c.Conn.Write(p)
	c.l.written.Add(int64(n))
	return n, err
}

// stalledStream starts a server for d whose handler reports its return on
// the returned channel, opens an event stream over raw TCP that is never
// read, and waits until the server has begun to write a sample far larger
// than the socket buffers: the handler is then stuck in that write.
func stalledStream(t *testing.T, d *dashboard.Dashboard) <-chan struct{} {
	t.Helper()
	returned := make(chan struct{}, 1)
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.ServeHTTP(w, r)
		if r.URL.Path == "/api/events" {
			returned <- struct{}{}
		}
	}))
	tl := &trackingListener{Listener: ts.Listener}
	ts.Listener = tl
	ts.Start()
	t.Cleanup(ts.Close)

	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	// Closing the client also unblocks a stuck server when the test
	// fails, so that ts.Close (registered earlier, run later) returns.
	t.Cleanup(func() { c.Close() })
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(8 << 10)
	}
	if _, err := io.WriteString(c, "GET /api/events HTTP/1.1\r\nHost: dashboard\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	// The stream's opening comment is written after the subscription.
	waitFor(t, "stream open", func() bool { return tl.written.Load() > 0 })
	before := tl.started.Load()
	d.SampleAt(t0)
	waitFor(t, "large sample written", func() bool { return tl.started.Load()-before >= hugeHost })
	return returned
}

// hugeHost is the size of the host name in a stalled stream's sample: far
// more than the socket buffers hold.
const hugeHost = 4 << 20

func hugeSource() dashboard.Snapshot {
	return dashboard.Snapshot{TopHosts: []dashboard.HostActivity{{Host: strings.Repeat("h", hugeHost)}}}
}

// waitFor polls cond until it holds, failing the test after a generous
// deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitReturn waits for a handler to report its return.
func waitReturn(t *testing.T, returned <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-returned:
	case <-time.After(30 * time.Second):
		t.Fatalf("event stream handler still running %s", what)
	}
}

// TestCloseEndsStalledStream: Close ends a stream whose client does not
// read, although its handler is blocked writing to it.
func TestCloseEndsStalledStream(t *testing.T) {
	// A write timeout far beyond the test's deadline: only Close can
	// end the stream in time.
	d, err := dashboard.New(dashboard.Config{Source: hugeSource, Interval: -1, WriteTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	returned := stalledStream(t, d)
	d.Close()
	waitReturn(t, returned, "after Close")
}

// TestStalledStreamTimesOut: a client that stops reading is dropped after
// Config.WriteTimeout, without Close.
func TestStalledStreamTimesOut(t *testing.T) {
	d, err := dashboard.New(dashboard.Config{Source: hugeSource, Interval: -1, WriteTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	returned := stalledStream(t, d)
	waitReturn(t, returned, "past its write timeout")
}

func TestNegativeWriteTimeout(t *testing.T) {
	src, _ := counterSource()
	d, err := dashboard.New(dashboard.Config{Source: src, Interval: -1, WriteTimeout: -time.Second})
	if err == nil {
		d.Close()
		t.Fatal("New accepted a negative WriteTimeout")
	}
	if !strings.Contains(err.Error(), "WriteTimeout") {
		t.Fatalf("error %q does not name the field", err)
	}
}

// TestCloseEndsIdleStreamCleanly: a stream that is waiting for the next
// sample when Close is called ends as a complete response.
func TestCloseEndsIdleStreamCleanly(t *testing.T) {
	src, _ := counterSource()
	d, _ := dashboard.New(dashboard.Config{Source: src, Interval: -1})
	ts := httptest.NewServer(d)
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, ": open") {
			break
		}
	}
	d.Close()
	if _, err := io.Copy(io.Discard, r); err != nil {
		t.Fatalf("stream after Close: %v", err)
	}
}
