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
