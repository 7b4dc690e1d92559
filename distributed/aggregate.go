package distributed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkit/crawlkit"
)

// SumStats adds up the Stats of several nodes into the crawl's: counters and
// throughputs are summed (so Peak is the sum of the nodes' peaks, an upper
// bound of the crawl's), Started is the earliest (of the nodes that have
// started: a zero Started is ignored) and Elapsed the longest.
//
// URLs.Discovered sums each node's count of URLs it accepted, and a URL
// found on pages of several nodes counts once per node: it overstates the
// crawl's distinct URLs. The partitions' own dedup is in QueueStats.
func SumStats(stats ...crawlkit.Stats) crawlkit.Stats {
	var out crawlkit.Stats
	for _, s := range stats {
		u, o := s.URLs, &out.URLs
		o.Discovered += u.Discovered
		o.Queued += u.Queued
		o.Fetched += u.Fetched
		o.Successful += u.Successful
		o.Failed += u.Failed
		o.Retried += u.Retried
		o.Duplicates += u.Duplicates
		o.BlockedByRobots += u.BlockedByRobots
		o.TrapRejected += u.TrapRejected
		o.OutOfScope += u.OutOfScope
		out.Throughput.Current += s.Throughput.Current
		out.Throughput.Average += s.Throughput.Average
		out.Throughput.Peak += s.Throughput.Peak
		out.Hosts.Discovered += s.Hosts.Discovered
		out.Hosts.Active += s.Hosts.Active
		out.Hosts.Blocked += s.Hosts.Blocked
		out.Workers.Active += s.Workers.Active
		out.Workers.Idle += s.Workers.Idle
		out.Workers.Parked += s.Workers.Parked
		out.Bytes += s.Bytes
		out.WireBytes += s.WireBytes
		if !s.Started.IsZero() && (out.Started.IsZero() || s.Started.Before(out.Started)) {
			out.Started = s.Started
		}
		out.Elapsed = max(out.Elapsed, s.Elapsed)
	}
	return out
}

// maxStatsBytes bounds a node's stats response.
const maxStatsBytes = 1 << 20

// FetchStats reads a node's Stats from its /stats URL.
func FetchStats(ctx context.Context, client *http.Client, statsURL string) (crawlkit.Stats, error) {
	var s crawlkit.Stats
	err := getJSON(ctx, client, statsURL, &s)
	return s, err
}

// StatsURL returns the /stats URL of the member's stats server. It is an
// error if the member published no stats address, or one that names no
// machine (0.0.0.0, :: or no host, as nodes listening on all interfaces
// published before -advertise): dialled, such an address reaches the
// local machine, whichever node published it.
func (m MemberInfo) StatsURL() (string, error) {
	if m.HTTP == "" {
		return "", fmt.Errorf("distributed: node %s publishes no stats address", m.ID)
	}
	host, _, err := net.SplitHostPort(m.HTTP)
	if err != nil {
		return "", fmt.Errorf("distributed: node %s: stats address %q: %w", m.ID, m.HTTP, err)
	}
	if unspecifiedHost(host) {
		return "", fmt.Errorf("distributed: node %s publishes the stats address %s, which names no machine (start it with -advertise)", m.ID, m.HTTP)
	}
	return "http://" + m.HTTP + "/stats", nil
}

// unspecifiedHost reports whether host, of a host:port, names no machine:
// empty or an unspecified address (0.0.0.0, ::), as a listener on all
// interfaces reports it.
func unspecifiedHost(host string) bool {
	if host == "" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsUnspecified()
}

// Members reads the live members of a crawl from its membership bucket,
// with the stats address each one published. opts are passed to
// nats.Connect (TLS, credentials: see NATSFlags). If ctx ends before every
// key was read, it returns ctx's error, never a partial list.
func Members(ctx context.Context, natsURL, crawlID string, opts ...nats.Option) ([]MemberInfo, error) {
	nc, err := connectNATS(natsURL, "crawlkit-stats", append([]nats.Option{nats.MaxReconnects(0)}, opts...))
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	kv, err := js.KeyValue(ctx, namesFor(crawlID).members)
	if err != nil {
		return nil, fmt.Errorf("distributed: crawl %q: %w", crawlID, err)
	}
	return listMembers(ctx, kv)
}

// listMembers reads the members in a membership bucket. It fails, rather
// than return some of them, if ctx ends before the listing is complete.
func listMembers(ctx context.Context, kv jetstream.KeyValue) ([]MemberInfo, error) {
	lister, err := kv.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	var out []MemberInfo
	for k := range lister.Keys() {
		e, err := kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var mi MemberInfo
		if err := json.Unmarshal(e.Value(), &mi); err != nil {
			continue
		}
		out = append(out, mi)
	}
	// The lister closes its channel, with no error, when ctx ends: a
	// listing cut short would look like a complete one.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("distributed: listing members: %w", err)
	}
	return out, nil
}
