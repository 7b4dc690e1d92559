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

	"github.com/crawlkit/crawlkit/service/dashboard"
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
// few kilobytes, and counts the bytes the server began to write and wrote,
// signalling progress after each write.
type trackingListener struct {
	net.Listener
	started, written atomic.Int64
	progress         chan struct{} // capacity 1
}

func (l *trackingListener) signal() {
	select {
	case l.progress <- struct{}{}:
	default:
	}
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
	c.l.signal()
	n, err := c.Conn.Write(p)
	c.l.written.Add(int64(n))
	c.l.signal()
	return n, err
}

// stalled is an event stream that its client does not read.
type stalled struct {
	// returned is closed when the stream's handler returns.
	returned chan struct{}
	// conn is the client's end.
	conn net.Conn
}

// stalledStream starts a server for d whose handler reports its return by
// closing stalled.returned, opens an event stream over raw TCP that is never
// read, takes a sample far larger than the socket buffers, and waits until
// the server has begun to write it (the handler is then stuck in that write)
// or, when ended is set, until the handler has returned: with a short
// WriteTimeout on a loaded machine the deadline may pass before the sample
// reaches the socket, and the write fails at once.
func stalledStream(t *testing.T, d *dashboard.Dashboard, ended bool) stalled {
	t.Helper()
	st := stalled{returned: make(chan struct{})}
	progress := make(chan struct{}, 1)
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.ServeHTTP(w, r)
		if r.URL.Path == "/api/events" {
			close(st.returned)
			// The return is progress too: waitFor looks again.
			select {
			case progress <- struct{}{}:
			default:
			}
		}
	}))
	tl := &trackingListener{Listener: ts.Listener, progress: progress}
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
	if _, err := io.WriteString(c, "GET /api/events HTTP/1.1\r\nHost: "+ts.Listener.Addr().String()+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	// endedEarly reports whether the handler returned, which is what
	// the caller waits for when ended is set.
	endedEarly := func() bool {
		if !ended {
			return false
		}
		select {
		case <-st.returned:
			return true
		default:
			return false
		}
	}
	// The stream's opening comment is written after the subscription.
	waitFor(t, "stream open", tl.progress, func() bool { return tl.written.Load() > 0 || endedEarly() })
	before := tl.started.Load()
	d.SampleAt(t0)
	waitFor(t, "large sample written", tl.progress, func() bool { return tl.started.Load()-before >= hugeHost || endedEarly() })
	st.conn = c
	return st
}

// hugeHost is the size of the host name in a stalled stream's sample: far
// more than the socket buffers hold.
const hugeHost = 4 << 20

func hugeSource() dashboard.Snapshot {
	return dashboard.Snapshot{TopHosts: []dashboard.HostActivity{{Host: strings.Repeat("h", hugeHost)}}}
}

// patience bounds every wait of these tests: far more than anything takes
// on a loaded machine, it only keeps a broken test from hanging.
const patience = 2 * time.Minute

// waitFor checks cond each time progress signals, until it holds, failing
// the test after a generous deadline.
func waitFor(t *testing.T, what string, progress <-chan struct{}, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(patience)
	defer deadline.Stop()
	for !cond() {
		select {
		case <-progress:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// waitReturn waits for a handler to report its return.
func waitReturn(t *testing.T, returned <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-returned:
	case <-time.After(patience):
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
	st := stalledStream(t, d, false)
	d.Close()
	waitReturn(t, st.returned, "after Close")
}

// TestStalledStreamTimesOut: a client that stops reading is dropped after
// Config.WriteTimeout, without Close.
func TestStalledStreamTimesOut(t *testing.T) {
	d, err := dashboard.New(dashboard.Config{Source: hugeSource, Interval: -1, WriteTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	st := stalledStream(t, d, true)
	waitReturn(t, st.returned, "past its write timeout")
	// The client was dropped: its connection ends (closed or reset)
	// without the sample.
	_ = st.conn.SetReadDeadline(time.Now().Add(patience))
	n, err := io.Copy(io.Discard, st.conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the connection stayed open after %d bytes", n)
	}
	if n >= hugeHost {
		t.Fatalf("the client received %d bytes, the whole sample", n)
	}
}

// TestStalledStreamTimesOutAtOnce: a write timeout that passes before a
// write reaches the socket, as 100 ms can on a loaded machine, ends the
// stream as well, and stalledStream's waits cope with it.
func TestStalledStreamTimesOutAtOnce(t *testing.T) {
	d, err := dashboard.New(dashboard.Config{Source: hugeSource, Interval: -1, WriteTimeout: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	st := stalledStream(t, d, true)
	waitReturn(t, st.returned, "past its write timeout")
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
