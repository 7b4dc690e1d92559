package frontier

import (
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// policyCase is one row of testdata/policy.json. Durations are Go duration
// strings; times ("at", "recrawl_at") are offsets from the settle time.
type policyCase struct {
	Name   string `json:"name"`
	Policy struct {
		MaxAttempts int    `json:"max_attempts"`
		RetryBase   string `json:"retry_base"`
		RetryMax    string `json:"retry_max"`
		Schedule    string `json:"schedule"` // "", "fixed:<duration>" or "adaptive"
	} `json:"policy"`
	Lease struct {
		Attempt     int    `json:"attempt"`
		Fingerprint uint64 `json:"fingerprint"`
		Interval    string `json:"interval"`
	} `json:"lease"`
	Outcome struct {
		Kind        string `json:"kind"`
		Fingerprint uint64 `json:"fingerprint"`
		RetryAfter  string `json:"retry_after"`
		RecrawlAt   string `json:"recrawl_at"`
	} `json:"outcome"`
	Want struct {
		Kind        string `json:"kind"`
		At          string `json:"at"`
		Attempt     int    `json:"attempt"`
		Fingerprint uint64 `json:"fingerprint"`
		Interval    string `json:"interval"`
	} `json:"want"`
	Err bool `json:"err"`
}

func loadPolicyCases(t *testing.T) []policyCase {
	t.Helper()
	b, err := os.ReadFile("testdata/policy.json")
	if err != nil {
		t.Fatal(err)
	}
	var cs []policyCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	if len(cs) == 0 {
		t.Fatal("no cases")
	}
	return cs
}

func dur(t *testing.T, s string) time.Duration {
	t.Helper()
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func outcomeKind(t *testing.T, s string) OutcomeKind {
	t.Helper()
	for k := OutcomeSuccess; k <= OutcomeFailed; k++ {
		if k.String() == s {
			return k
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("outcome kind %q", s)
	}
	return OutcomeKind(n)
}

func settlementKind(t *testing.T, s string) SettlementKind {
	t.Helper()
	for k := SettlementFinished; k <= SettlementRecrawl; k++ {
		if k.String() == s {
			return k
		}
	}
	t.Fatalf("settlement kind %q", s)
	return 0
}

func (c *policyCase) build(t *testing.T, now time.Time) (Policy, Lease, Outcome) {
	p := Policy{MaxAttempts: c.Policy.MaxAttempts, RetryBase: dur(t, c.Policy.RetryBase), RetryMax: dur(t, c.Policy.RetryMax)}
	switch s := c.Policy.Schedule; {
	case s == "":
	case s == "adaptive":
		p.Schedule = Adaptive{}
	case strings.HasPrefix(s, "fixed:"):
		p.Schedule = FixedInterval(dur(t, strings.TrimPrefix(s, "fixed:")))
	default:
		t.Fatalf("schedule %q", s)
	}
	l := Lease{Attempt: c.Lease.Attempt, Fingerprint: c.Lease.Fingerprint, Interval: dur(t, c.Lease.Interval)}
	o := Outcome{Kind: outcomeKind(t, c.Outcome.Kind), Fingerprint: c.Outcome.Fingerprint, RetryAfter: dur(t, c.Outcome.RetryAfter)}
	if c.Outcome.RecrawlAt != "" {
		o.RecrawlAt = now.Add(dur(t, c.Outcome.RecrawlAt))
	}
	return p, l, o
}

func TestPolicyPlan(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range loadPolicyCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			p, l, o := c.build(t, now)
			got, err := p.Plan(&l, o, now)
			if c.Err {
				if !errors.Is(err, ErrInvalidOutcome) {
					t.Fatalf("err = %v, want ErrInvalidOutcome", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := Decision{
				Settlement:  Settlement{Kind: settlementKind(t, c.Want.Kind), Attempt: c.Want.Attempt},
				Fingerprint: c.Want.Fingerprint,
				Interval:    dur(t, c.Want.Interval),
			}
			if c.Want.At != "" {
				want.At = now.Add(dur(t, c.Want.At))
			}
			if got != want {
				t.Errorf("\n got %+v\nwant %+v", got, want)
			}
			if got.Requeue() != (want.Kind == SettlementRetrying || want.Kind == SettlementRecrawl) {
				t.Errorf("Requeue() = %v for %v", got.Requeue(), got.Kind)
			}
			if got.Kind == SettlementRetrying {
				if d := p.RetryDelay(got.Attempt, o.RetryAfter); !now.Add(d).Equal(got.At) {
					t.Errorf("RetryDelay(%d) = %v, but Plan waits %v", got.Attempt, d, got.At.Sub(now))
				}
			}
		})
	}
}

// TestFrontierUsesPolicy settles one lease of a Frontier per case and checks
// that Done reports what Policy.Plan decides, at times the Frontier can
// hold (before 2262), and that the next lease of a requeued URL carries the
// Decision's attempt count, fingerprint and interval.
func TestFrontierUsesPolicy(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range loadPolicyCases(t) {
		if c.Err || c.Lease.Attempt >= 255 {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			p, l, o := c.build(t, now)
			d, err := p.Plan(&l, o, now)
			if err != nil {
				t.Fatal(err)
			}
			if d.Requeue() && unixNano(d.At) == 0 {
				t.Skip("due at the epoch")
			}
			f, err := New(Config{MaxAttempts: p.MaxAttempts, RetryBase: p.RetryBase, RetryMax: p.RetryMax, Schedule: p.Schedule, Politeness: FixedDelay(0)})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			mustAdd(t, f, now, Entry{URL: "http://a.test/"})
			fl := mustNext(t, f, now)
			// Give the frontier's item the case's history, as earlier
			// settlements would have.
			fl.it.attempts = uint8(l.Attempt)
			if l.Fingerprint != 0 || l.Interval != 0 {
				fl.it.ext = &itemExt{fp: l.Fingerprint, interval: int64(l.Interval), recrawl: true}
			}
			got := mustDone(t, f, now, fl, o)
			want := d.Settlement
			if d.Requeue() {
				want.At = time.Unix(0, unixNano(d.At))
			}
			if got.Kind != want.Kind || got.Attempt != want.Attempt || !got.At.Equal(want.At) {
				t.Fatalf("Done = %+v, Plan = %+v", got, want)
			}
			if !d.Requeue() || unixNano(d.At) == maxInt64 {
				return
			}
			next, _, err := f.NextAt(time.Unix(0, unixNano(d.At)))
			if err != nil || next == nil {
				t.Fatalf("NextAt(due) = %v, %v", next, err)
			}
			if next.Attempt != d.Attempt {
				t.Errorf("next lease's Attempt %d, want %d", next.Attempt, d.Attempt)
			}
			if d.Kind == SettlementRecrawl && (next.Fingerprint != d.Fingerprint || next.Interval != d.Interval) {
				t.Errorf("next lease's fingerprint %d interval %v, want %d %v", next.Fingerprint, next.Interval, d.Fingerprint, d.Interval)
			}
		})
	}
}

const maxInt64 = 1<<63 - 1

func TestRetryDelay(t *testing.T) {
	p := Policy{RetryBase: 100, RetryMax: 1000}
	for _, c := range []struct {
		attempt int
		after   time.Duration
		want    time.Duration
	}{
		{-3, 0, 100}, {0, 0, 100}, {1, 0, 100}, {2, 0, 200}, {4, 0, 800}, {5, 0, 1000},
		{64, 0, 1000}, {1 << 20, 0, 1000}, {1, 5000, 5000}, {3, 50, 400},
	} {
		if got := p.RetryDelay(c.attempt, c.after); got != c.want {
			t.Errorf("RetryDelay(%d, %d) = %d, want %d", c.attempt, c.after, got, c.want)
		}
	}
	if got := (Policy{}).RetryDelay(1, 0); got != DefaultRetryBase {
		t.Errorf("zero Policy's first delay %v, want %v", got, DefaultRetryBase)
	}
	// Every delay of any base and attempt is within [min(base, max), max]
	// and never shrinks as attempts grow: no overflow anywhere.
	for _, base := range []time.Duration{1, 3, 1 << 30, 1<<40 + 512, maxInt64 / 3, maxInt64} {
		for _, hi := range []time.Duration{1, time.Hour, maxInt64} {
			p := Policy{RetryBase: base, RetryMax: hi}
			prev := time.Duration(0)
			for a := 1; a <= 300; a++ {
				d := p.RetryDelay(a, 0)
				if d < min(base, hi) || d > hi || d < prev {
					t.Fatalf("base %d max %d attempt %d: %d after %d", base, hi, a, d, prev)
				}
				prev = d
			}
		}
	}
}
