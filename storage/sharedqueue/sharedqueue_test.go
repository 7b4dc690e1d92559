package sharedqueue

import (
	"errors"
	"testing"
	"time"
)

func TestWithDefaults(t *testing.T) {
	c, err := Config{}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Bands: DefaultBands, LeaseTTL: DefaultLeaseTTL, MaxAttempts: DefaultMaxAttempts,
		RetryBase: DefaultRetryBase, RetryMax: DefaultRetryMax, PollInterval: DefaultPollInterval, OpTimeout: DefaultOpTimeout}
	if c.Bands != want.Bands || c.LeaseTTL != want.LeaseTTL || c.MaxAttempts != want.MaxAttempts ||
		c.RetryBase != want.RetryBase || c.RetryMax != want.RetryMax || c.PollInterval != want.PollInterval ||
		c.OpTimeout != want.OpTimeout {
		t.Fatalf("zero Config filled to %+v, want %+v", c, want)
	}
	kept, err := Config{Bands: 2, LeaseTTL: time.Second, MaxAttempts: 9, RetryBase: time.Millisecond,
		RetryMax: time.Minute, PollInterval: time.Hour, OpTimeout: 3 * time.Second}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if kept.Bands != 2 || kept.LeaseTTL != time.Second || kept.MaxAttempts != 9 || kept.RetryBase != time.Millisecond ||
		kept.RetryMax != time.Minute || kept.PollInterval != time.Hour || kept.OpTimeout != 3*time.Second {
		t.Fatalf("set values changed: %+v", kept)
	}
	if p := kept.Policy(); p.MaxAttempts != 9 || p.RetryBase != time.Millisecond || p.RetryMax != time.Minute {
		t.Fatalf("Policy() = %+v", p)
	}
	for _, bands := range []int{-1, 17} {
		if _, err := (Config{Bands: bands}).WithDefaults(); !errors.Is(err, ErrConfig) {
			t.Errorf("Bands %d: err %v, want ErrConfig", bands, err)
		}
	}
}
