package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestIsVirtualHost(t *testing.T) {
	for host, want := range map[string]bool{
		"h0001.test":   true,
		"H0001.TEST.":  true,
		"hostile.test": true,
		".test":        false,
		"test":         false,
		"example.com":  false,
		"127.0.0.1":    false,
		"h1.test.com":  false,
	} {
		if got := IsVirtualHost(host); got != want {
			t.Errorf("IsVirtualHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestDialerRefusesOtherHostsBeforeDialing(t *testing.T) {
	// The web address is a closed port: had the dialer tried to connect
	// for the refused names, the error would be a connection error.
	dial := Dialer("127.0.0.1:1")
	for _, addr := range []string{"example.com:80", "10.0.0.1:80", "no-port.test"} {
		_, err := dial(context.Background(), "tcp", addr)
		if !errors.Is(err, ErrNotVirtualHost) {
			t.Errorf("dial(%q) = %v, want ErrNotVirtualHost", addr, err)
		}
	}
}

func TestDialerRoutesVirtualHosts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Host)
	}))
	defer srv.Close()
	c := &http.Client{Transport: Transport(srv.Listener.Addr().String())}
	resp, err := c.Get("http://h0042.test/x")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf [64]byte
	n, _ := resp.Body.Read(buf[:])
	if got := string(buf[:n]); got != "h0042.test" {
		t.Errorf("server saw Host %q, want h0042.test", got)
	}
}

// fakeControl serves the control endpoint with a fixed report.
func fakeControl(t *testing.T, rep ServerReport, resets *atomic.Int32) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /reset", func(w http.ResponseWriter, r *http.Request) {
		resets.Add(1)
		_ = json.NewEncoder(w).Encode(true)
	})
	mux.HandleFunc("GET /report", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(rep)
	})
	mux.HandleFunc("GET /count", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(int64(rep.Pages))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

func TestRunTakesJudgementFromServer(t *testing.T) {
	rep := ServerReport{
		Pages: 2000, RobotsViolations: 3, SpacingViolations: 4, ConcurrencyViolations: 5,
		ExactRepeats: 6, SpellingRepeats: 7, ContentRepeats: 8, TrapFetches: 9,
		TruthUnique: 100, Covered: 50, Coverage: 0.5,
	}
	var resets atomic.Int32
	p := Params{Web: "127.0.0.1:1", Control: fakeControl(t, rep, &resets), Agent: "benchbot", Timeout: time.Minute, Label: "x"}
	res, err := Run("fake", p, func(ctx context.Context) (int64, error) { return 1999, errors.New("boom") })
	if err != nil {
		t.Fatal(err)
	}
	if resets.Load() != 1 {
		t.Errorf("reset %d times, want once before the crawl", resets.Load())
	}
	if res.Crawler != "fake" || res.Label != "x" || res.Pages != 2000 || res.CrawlerPages != 1999 {
		t.Errorf("identity/pages wrong: %+v", res)
	}
	if res.RobotsViol != 3 || res.PolitenessVio != 9 || res.ExactDup != 6 || res.SpellingDup != 7 ||
		res.ContentDup != 8 || res.TrapFetches != 9 || res.Coverage != 0.5 {
		t.Errorf("server judgement not carried over: %+v", res)
	}
	if res.Error != "boom" {
		t.Errorf("Error = %q, want the crawl's error", res.Error)
	}
	if res.ElapsedS <= 0 || res.PagesPerS <= 0 || res.PeakRSSMB <= 0 {
		t.Errorf("measurements missing: %+v", res)
	}
	if want := res.CPUSeconds / 2; math.Abs(res.CPUPer1000-want) > 1e-9*want {
		t.Errorf("CPUPer1000 = %v, want %v (CPU per 2 000 pages × 1 000)", res.CPUPer1000, want)
	}
}

func TestRunStopsAtTimeout(t *testing.T) {
	var resets atomic.Int32
	p := Params{Web: "127.0.0.1:1", Control: fakeControl(t, ServerReport{Pages: 1}, &resets), Agent: "a",
		Timeout: 50 * time.Millisecond}
	res, err := Run("fake", p, func(ctx context.Context) (int64, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != context.DeadlineExceeded.Error() {
		t.Errorf("Error = %q, want the deadline", res.Error)
	}
}

func TestSelfUsage(t *testing.T) {
	u, err := SelfUsage()
	if err != nil {
		t.Fatal(err)
	}
	rss, err := currentRSS()
	if err != nil {
		t.Fatal(err)
	}
	// The peak was read just before the current value, which may have
	// grown a little since.
	if rss <= 0 || u.MaxRSS < rss*9/10 || u.CPU <= 0 {
		t.Errorf("peak RSS %d, current RSS %d, CPU %v: peak should not be below current", u.MaxRSS, rss, u.CPU)
	}
}

func ExampleIsVirtualHost() {
	for _, h := range []string{"h0042.test", "example.com"} {
		fmt.Println(h, IsVirtualHost(h))
	}
	// Output:
	// h0042.test true
	// example.com false
}
