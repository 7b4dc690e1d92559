package distributed

import (
	"errors"
	"testing"
	"time"
)

func durationOf(n int64) time.Duration { return time.Duration(n) }

func TestVersionCheck(t *testing.T) {
	for _, c := range []struct {
		v  string
		ok bool
	}{
		{"2.11.0", true}, {"2.11.4", true}, {"2.12.0-RC.1", true}, {"v2.15.2", true}, {"3.0.0", true},
		{"2.10.29", false}, {"2.9.25", false}, {"1.4.1", false}, {"", false}, {"garbage", false},
	} {
		err := checkServerVersion(c.v)
		if (err == nil) != c.ok {
			t.Errorf("checkServerVersion(%q) = %v, want ok=%v", c.v, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrServerTooOld) {
			t.Errorf("checkServerVersion(%q) = %v, not ErrServerTooOld", c.v, err)
		}
	}
}

func TestMsgIDRoundTrip(t *testing.T) {
	for _, k := range []uint64{0, 1, 0xdeadbeef, 1<<64 - 1, 0x0123456789abcdef} {
		id := msgID(k)
		got, ok := keyOfMsgID(id)
		if !ok || got != k || len(id) != 16 {
			t.Errorf("msgID(%#x) = %q, back %#x %v", k, id, got, ok)
		}
	}
	for _, bad := range []string{"", "123", "zzzzzzzzzzzzzzzz", "0123456789abcdef0"} {
		if _, ok := keyOfMsgID(bad); ok {
			t.Errorf("keyOfMsgID(%q) accepted", bad)
		}
	}
}

func TestRetryDelay(t *testing.T) {
	q := &Queue{cfg: Config{RetryBase: 100, RetryMax: 1000}}
	for _, c := range []struct {
		tries  uint64
		after  int64
		expect int64
	}{
		{1, 0, 100}, {2, 0, 200}, {3, 0, 400}, {4, 0, 800}, {5, 0, 1000}, {60, 0, 1000}, {1, 5000, 5000},
	} {
		if got := q.retryDelay(c.tries, durationOf(c.after)); int64(got) != c.expect {
			t.Errorf("retryDelay(%d, %d) = %d, want %d", c.tries, c.after, got, c.expect)
		}
	}
}

// FuzzServerVersion feeds arbitrary version strings (the server reports its
// own) and message ids to the parsers: they must not panic, and an accepted
// version is at least itself.
func FuzzServerVersion(f *testing.F) {
	for _, s := range []string{"2.11.0", "v2.12.0-RC.1", "2.9", "", "...", "2.11.0.7", "99999999999999999999.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if versionAtLeast(v, MinServerVersion) && !versionAtLeast(v, v) {
			t.Errorf("%q accepted but not at least itself", v)
		}
		if k, ok := keyOfMsgID(v); ok && msgID(k) != v && len(v) == 16 {
			// Upper-case hex parses too; its canonical form differs.
			if back, _ := keyOfMsgID(msgID(k)); back != k {
				t.Errorf("key %#x of %q does not round-trip", k, v)
			}
		}
	})
}
