package distributed

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// TestAdvertiseAddr checks the stats address a node publishes: never one
// that names no machine, which other machines would dial as their own.
func TestAdvertiseAddr(t *testing.T) {
	host := func(h string) func() (string, error) { return func() (string, error) { return h, nil } }
	noHost := func() (string, error) { return "", errors.New("no host name") }
	for _, c := range []struct {
		listen, advertise string
		hostname          func() (string, error)
		want              string // "" for an error
	}{
		// A listener on a particular address publishes it.
		{"127.0.0.1:9090", "", noHost, "127.0.0.1:9090"},
		{"10.0.0.5:9090", "", noHost, "10.0.0.5:9090"},
		{"[fd00::5]:9090", "", noHost, "[fd00::5]:9090"},
		// One on all interfaces publishes the host name and its port.
		{"[::]:9090", "", host("node-a.example"), "node-a.example:9090"},
		{"0.0.0.0:41234", "", host("node-a"), "node-a:41234"},
		{":9090", "", host("node-a"), "node-a:9090"},
		{"[::ffff:0.0.0.0]:9090", "", host("node-a"), "node-a:9090"},
		// ... unless the host name is no use elsewhere.
		{"[::]:9090", "", noHost, ""},
		{"[::]:9090", "", host(""), ""},
		{"[::]:9090", "", host("localhost"), ""},
		{"[::]:9090", "", host("localhost.localdomain"), ""},
		{"[::]:9090", "", host("127.0.0.1"), ""},
		// -advertise wins, and must name a machine and a port.
		{"[::]:9090", "10.0.0.5:80", noHost, "10.0.0.5:80"},
		{"127.0.0.1:9090", "node-a.example:9090", noHost, "node-a.example:9090"},
		{"[::]:9090", "0.0.0.0:9090", host("node-a"), ""},
		{"[::]:9090", "[::]:9090", host("node-a"), ""},
		{"[::]:9090", ":9090", host("node-a"), ""},
		{"[::]:9090", "node-a", host("node-a"), ""},
		{"[::]:9090", "node-a:0", host("node-a"), ""},
		{"[::]:9090", "node-a:http", host("node-a"), ""},
	} {
		got, err := advertiseAddr(c.listen, c.advertise, c.hostname)
		if c.want == "" {
			if err == nil {
				t.Errorf("advertiseAddr(%q, %q) = %q, want an error", c.listen, c.advertise, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("advertiseAddr(%q, %q) = %q, %v; want %q", c.listen, c.advertise, got, err, c.want)
		}
	}
}

// TestMemberStatsURL checks which published addresses crawlstats dials.
func TestMemberStatsURL(t *testing.T) {
	for _, c := range []struct {
		http, want string // want "" for an error
	}{
		{"10.0.0.5:9090", "http://10.0.0.5:9090/stats"},
		{"node-a.example:9090", "http://node-a.example:9090/stats"},
		{"[fd00::5]:9090", "http://[fd00::5]:9090/stats"},
		{"127.0.0.1:9090", "http://127.0.0.1:9090/stats"},
		{"[::]:9090", ""},
		{"0.0.0.0:9090", ""},
		{":9090", ""},
		{"node-a", ""},
		{"", ""},
	} {
		got, err := MemberInfo{ID: "a", HTTP: c.http}.StatsURL()
		if c.want == "" {
			if err == nil {
				t.Errorf("StatsURL of %q = %q, want an error", c.http, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("StatsURL of %q = %q, %v; want %q", c.http, got, err, c.want)
		}
	}
}

// TestRunCommandRejectsUnspecifiedAdvertise checks that the command
// refuses an -advertise address naming no machine, and -advertise without
// -http, before it connects to NATS.
func TestRunCommandRejectsUnspecifiedAdvertise(t *testing.T) {
	for _, args := range [][]string{
		{"-http", "127.0.0.1:0", "-advertise", "0.0.0.0:9090"},
		{"-advertise", "node-a:9090"},
	} {
		var out, errs bytes.Buffer
		err := RunCommand(context.Background(), append(args, "-nats", "nats://127.0.0.1:1", "-seed", "http://a.test/"), &out, &errs)
		if err == nil || !strings.Contains(err.Error(), "-advertise") {
			t.Errorf("%q: %v, want an -advertise error", args, err)
		}
	}
}

// TestRunCommandRejectsBadFlags checks that out-of-range flag values are
// refused with an error naming the flag, before the command connects to
// NATS, instead of being replaced by a default in silence (an explicit
// -partitions 0 or -delay 0 ran with 64 partitions and a 1 s delay), and
// that stray arguments are not ignored.
func TestRunCommandRejectsBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-partitions", "0"}, "-partitions"},
		{[]string{"-replicas", "-1"}, "-replicas"},
		{[]string{"-workers", "0"}, "-workers"},
		{[]string{"-workers", "-3"}, "-workers"},
		{[]string{"-delay", "0s"}, "-delay"},
		{[]string{"-delay", "-1s"}, "-delay"},
		{[]string{"-max-crawl-delay", "0s"}, "-max-crawl-delay"},
		{[]string{"-max-depth", "-1"}, "-max-depth"},
		{[]string{"-member-ttl", "0s"}, "-member-ttl"},
		{[]string{"-ack-wait", "0s"}, "-ack-wait"},
		{[]string{"-handover-hold", "-1s"}, "-handover-hold"},
		{[]string{"-max-held", "0"}, "-max-held"},
		{[]string{"-retry-base", "0s"}, "-retry-base"},
		{[]string{"-max-attempts", "0"}, "-max-attempts"},
		{[]string{"-dup-window", "0s"}, "-dup-window"},
		{[]string{"-expected-urls", "0"}, "-expected-urls"},
		{[]string{"http://b.test/"}, "http://b.test/"},
	} {
		var out, errs bytes.Buffer
		args := append([]string{"-nats", "nats://127.0.0.1:1", "-seed", "http://a.test/"}, c.args...)
		err := RunCommand(context.Background(), args, &out, &errs)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error about %s", c.args, err, c.want)
		}
	}
}
