package fetch

import (
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"120", 120 * time.Second, true},
		{" 0 ", 0, true},
		{"Sun, 01 Mar 2026 12:02:00 GMT", 2 * time.Minute, true},              // IMF-fixdate
		{"Sunday, 01-Mar-26 12:00:30 GMT", 30 * time.Second, true},            // RFC 850
		{"Sun Mar  1 12:00:10 2026", 10 * time.Second, true},                  // asctime
		{"Sun, 01 Mar 2026 11:00:00 GMT", 0, true},                            // past
		{"99999999999999999999999", maxRetryAfterSeconds * time.Second, true}, // no overflow
		{"-5", 0, false},
		{"1.5", 0, false},
		{"", 0, false},
		{"soon", 0, false},
	}
	for _, c := range cases {
		got, ok := ParseRetryAfter(c.in, now)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "Sun, 01 Mar 2026 12:02:00 GMT", "Sunday, 01-Mar-26 12:00:30 GMT", "-1", "1e9", ""} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := ParseRetryAfter(s, now)
		if d < 0 {
			t.Fatalf("negative delay %v for %q", d, s)
		}
		if !ok && d != 0 {
			t.Fatalf("delay %v with ok=false for %q", d, s)
		}
	})
}
