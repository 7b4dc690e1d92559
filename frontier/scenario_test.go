package frontier_test

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

var update = flag.Bool("update", false, "rewrite the expected results in testdata")

// scenarioStart is the clock of the scenarios at offset 0.
var scenarioStart = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// TestScenarios walks testdata/scenarios/*.txt: scheduling scenarios on a
// frontier with a fake clock. A file is a sequence of lines:
//
//	new [Option=value ...]   a new Frontier (Delay, LeaseTTL, RetryBase, RetryMax,
//	                         Recrawl as durations; Bands, MaxLeasesPerHost,
//	                         MaxAttempts, Window as numbers; BandWeights as 4,2,1;
//	                         Store=memory for a MemoryStore behind it)
//	at DURATION              the clock, as an offset from the start
//	add URL [depth=N] [notbefore=DURATION] => RESULT
//	next => RESULT           NextAt: the lease, or when to ask again
//	drain => RESULT          NextAt until nothing is ready, settling each lease
//	                         with success at once: the URLs in lease order
//	done LEASE OUTCOME => RESULT    DoneAt: success, success=FINGERPRINT,
//	                         not-modified, failed, retry or retry=DURATION
//	                         (RetryAfter), and @DURATION for RecrawlAt
//	                         (success@30m)
//	extend LEASE DURATION => RESULT ExtendAt
//	release LEASE => RESULT  ReleaseAt
//
// where LEASE is a URL, for its latest lease, or URL#N for its Nth.
//
//	block HOST DURATION      BlockHost until that offset
//	stats => RESULT          some of the Stats counters
//
// Times in results are offsets from the start. Run with -update to rewrite
// the results after a deliberate change, and review the diff.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/scenarios/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) { runScenario(t, file) })
	}
}

func at(d string) (time.Time, error) {
	v, err := time.ParseDuration(d)
	return scenarioStart.Add(v), err
}

func offsetOf(tm time.Time) string {
	if tm.IsZero() {
		return "never"
	}
	d := tm.Sub(scenarioStart)
	if d >= 0 {
		return "+" + d.String()
	}
	return d.String()
}

func scenarioOptions(args []string) (frontier.Config, error) {
	var o frontier.Config
	o.Politeness = frontier.FixedDelay(0)
	for _, a := range args {
		name, val, _ := strings.Cut(a, "=")
		dur := func() (time.Duration, error) { return time.ParseDuration(val) }
		num := func() (int, error) { return strconv.Atoi(val) }
		var err error
		switch name {
		case "Delay":
			var d time.Duration
			d, err = dur()
			o.Politeness = frontier.FixedDelay(d)
		case "LeaseTTL":
			o.LeaseTTL, err = dur()
		case "RetryBase":
			o.RetryBase, err = dur()
		case "RetryMax":
			o.RetryMax, err = dur()
		case "Recrawl":
			var d time.Duration
			d, err = dur()
			o.Schedule = frontier.FixedInterval(d)
		case "Bands":
			o.Bands, err = num()
		case "MaxLeasesPerHost":
			o.MaxLeasesPerHost, err = num()
		case "MaxAttempts":
			o.MaxAttempts, err = num()
		case "Window":
			o.Window, err = num()
		case "BandWeights":
			for _, w := range strings.Split(val, ",") {
				n, err := strconv.Atoi(w)
				if err != nil {
					return o, err
				}
				o.BandWeights = append(o.BandWeights, n)
			}
		case "Store":
			if val != "memory" {
				return o, fmt.Errorf("unknown Store %q", val)
			}
			o.Store = frontier.NewMemoryStore()
		default:
			return o, fmt.Errorf("unknown option %q", name)
		}
		if err != nil {
			return o, fmt.Errorf("%s: %v", name, err)
		}
	}
	return o, nil
}

func fmtLease(l *frontier.Lease) string {
	s := l.URL
	if l.Attempt > 0 {
		s += fmt.Sprintf(" attempt=%d", l.Attempt)
	}
	if l.Fingerprint != 0 {
		s += fmt.Sprintf(" fingerprint=%d", l.Fingerprint)
	}
	return s + " expires=" + offsetOf(l.Expires)
}

func fmtErr(err error) string { return "error: " + err.Error() }

func parseOutcome(s string) (frontier.Outcome, error) {
	name, arg, hasArg := strings.Cut(s, "=")
	name, recrawl, hasRecrawl := strings.Cut(name, "@")
	var o frontier.Outcome
	switch name {
	case "success":
		o = frontier.Success(0)
	case "not-modified":
		o = frontier.NotModified()
	case "failed":
		o = frontier.Failed()
	case "retry":
		o = frontier.Retry(0)
	default:
		return o, fmt.Errorf("unknown outcome %q", s)
	}
	if hasArg {
		if name != "retry" {
			if n, err := strconv.ParseUint(arg, 10, 64); err == nil && name == "success" {
				o.Fingerprint = n
			} else {
				return o, fmt.Errorf("outcome %q takes no =value", name)
			}
		} else {
			d, err := time.ParseDuration(arg)
			if err != nil {
				return o, err
			}
			o.RetryAfter = d
		}
	}
	if hasRecrawl {
		t, err := at(recrawl)
		if err != nil {
			return o, err
		}
		o.RecrawlAt = t
	}
	return o, nil
}

func runScenario(t *testing.T, file string) {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		out    []string
		fr     *frontier.Frontier
		now    = scenarioStart
		leases map[string][]*frontier.Lease // by URL, in lease order
	)
	defer func() {
		if fr != nil {
			fr.Close()
		}
	}()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		cmd, want, hasWant := strings.Cut(text, " => ")
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("%s:%d: %s", file, line, fmt.Sprintf(format, args...))
		}
		args := strings.Fields(cmd)
		if len(args) == 0 || strings.HasPrefix(args[0], "#") {
			out = append(out, text)
			continue
		}
		if args[0] != "new" && fr == nil {
			fail("%s before new", args[0])
		}
		lease := func(spec string) *frontier.Lease {
			u, nth, hasNth := strings.Cut(spec, "#")
			ls := leases[u]
			i := len(ls) - 1
			if hasNth {
				n, err := strconv.Atoi(nth)
				if err != nil {
					fail("lease %q: %v", spec, err)
				}
				i = n - 1
			}
			if i < 0 || i >= len(ls) {
				fail("no lease %s", spec)
			}
			return ls[i]
		}
		var got string
		switch args[0] {
		case "new":
			opts, err := scenarioOptions(args[1:])
			if err != nil {
				fail("%v", err)
			}
			opts.Now = func() time.Time { t.Errorf("%s: the wall clock was read", file); return now }
			if fr != nil {
				fr.Close()
			}
			if fr, err = frontier.New(opts); err != nil {
				fail("New: %v", err)
			}
			now, leases = scenarioStart, map[string][]*frontier.Lease{}
			out = append(out, text)
			continue
		case "at":
			if len(args) != 2 {
				fail("at DURATION")
			}
			if now, err = at(args[1]); err != nil {
				fail("%v", err)
			}
			out = append(out, text)
			continue
		case "block":
			if len(args) != 3 {
				fail("block HOST DURATION")
			}
			until, err := at(args[2])
			if err != nil {
				fail("%v", err)
			}
			fr.BlockHost(args[1], until)
			out = append(out, text)
			continue
		case "add":
			if len(args) < 2 {
				fail("add URL [depth=N] [notbefore=DURATION]")
			}
			e := frontier.Entry{URL: args[1]}
			for _, a := range args[2:] {
				name, val, _ := strings.Cut(a, "=")
				switch name {
				case "depth":
					if e.Depth, err = strconv.Atoi(val); err != nil {
						fail("%v", err)
					}
				case "notbefore":
					if e.NotBefore, err = at(val); err != nil {
						fail("%v", err)
					}
				default:
					fail("unknown add argument %q", a)
				}
			}
			got = "ok"
			if err := fr.AddAt(now, e); err != nil {
				got = fmtErr(err)
			}
		case "next":
			l, next, err := fr.NextAt(now)
			switch {
			case err != nil:
				got = fmtErr(err)
			case l != nil:
				leases[l.URL] = append(leases[l.URL], l)
				got = fmtLease(l)
			case next.IsZero():
				got = "none, drained"
			default:
				got = "none until " + offsetOf(next)
			}
		case "drain":
			var urls []string
			for {
				l, next, err := fr.NextAt(now)
				if err != nil {
					urls = append(urls, fmtErr(err))
					break
				}
				if l == nil {
					if next.IsZero() {
						urls = append(urls, "(drained)")
					} else {
						urls = append(urls, "(next "+offsetOf(next)+")")
					}
					break
				}
				urls = append(urls, l.URL)
				if _, err := fr.DoneAt(now, l, frontier.Success(0)); err != nil {
					fail("Done(%s): %v", l.URL, err)
				}
			}
			got = strings.Join(urls, " ")
		case "done":
			if len(args) != 3 {
				fail("done URL OUTCOME")
			}
			o, err := parseOutcome(args[2])
			if err != nil {
				fail("%v", err)
			}
			s, err := fr.DoneAt(now, lease(args[1]), o)
			if err != nil {
				got = fmtErr(err)
				break
			}
			got = s.Kind.String()
			if !s.At.IsZero() {
				got += " at " + offsetOf(s.At)
			}
			if s.Attempt != 0 {
				got += fmt.Sprintf(" attempt=%d", s.Attempt)
			}
		case "extend":
			if len(args) != 3 {
				fail("extend URL DURATION")
			}
			d, err := time.ParseDuration(args[2])
			if err != nil {
				fail("%v", err)
			}
			l := lease(args[1])
			if err := fr.ExtendAt(now, l, d); err != nil {
				got = fmtErr(err)
			} else {
				got = "expires=" + offsetOf(l.Expires)
			}
		case "release":
			got = "ok"
			if err := fr.ReleaseAt(now, lease(args[1])); err != nil {
				got = fmtErr(err)
			}
		case "stats":
			s := fr.Stats()
			got = fmt.Sprintf("in-memory=%d delayed=%d leased=%d expired=%d released=%d retried=%d dropped=%d recrawls=%d",
				s.InMemory, s.Delayed, s.Leased, s.Expired, s.Released, s.Retried, s.Dropped, s.Recrawls)
		default:
			fail("unknown command %q", args[0])
		}
		out = append(out, strings.TrimRight(cmd, " ")+" => "+got)
		if !*update && (!hasWant || got != want) {
			t.Errorf("%s:%d: %s\n got: %s\nwant: %s", file, line, cmd, got, want)
		}
	}
	if *update {
		if err := os.WriteFile(file, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
