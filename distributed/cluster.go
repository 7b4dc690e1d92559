package distributed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/service/dashboard"
)

// ClusterStatus is a distributed crawl seen as a whole: who owns which
// partition, how far each partition's consumer lags behind its subject,
// and what each node has done. ReadCluster reads it from the stream's
// consumers (their leaders' own numbers) and from the /stats and /queue of
// the nodes in the membership bucket.
type ClusterStatus struct {
	Crawl string    `json:"crawl"`
	Time  time.Time `json:"time"`
	// LastSeq and Messages are the URL stream's last sequence and its
	// stored messages.
	LastSeq  uint64 `json:"last_seq"`
	Messages uint64 `json:"messages"`
	// Lag sums the partitions' Lag: URLs published and not finished.
	Lag        uint64            `json:"lag"`
	Partitions []PartitionStatus `json:"partitions"`
	Nodes      []NodeStatus      `json:"nodes"`
	// Totals sums the Stats of the nodes that answered (SumStats).
	Totals crawlkit.Stats `json:"totals"`
}

// PartitionStatus is one partition's consumer as its leader reports it.
type PartitionStatus struct {
	ID int `json:"id"`
	// Owner is the node whose /queue lists the partition as owned; empty
	// while the partition moves, or when its owner serves no statistics.
	Owner string `json:"owner,omitempty"`
	// Pinned reports whether the server has pinned a client, the fence of
	// the partition's one consumer (README.md, "Fencing").
	Pinned bool `json:"pinned"`
	// Pending counts the partition's messages not delivered yet;
	// AckPending those delivered and not acknowledged (held by the owner:
	// queued locally, being fetched, or waiting for a retry);
	// Redelivered those delivered more than once and not acknowledged.
	Pending     uint64 `json:"pending"`
	AckPending  int    `json:"ack_pending"`
	Redelivered int    `json:"redelivered"`
	// AckFloor is the stream sequence up to which every message of the
	// partition is acknowledged; LastSeq the stream sequence of its
	// newest message (0: none yet). The partition has finished every URL
	// published to it when AckFloor >= LastSeq (the server moves the floor
	// over other partitions' messages, so it may pass LastSeq).
	AckFloor uint64 `json:"ack_floor"`
	LastSeq  uint64 `json:"last_seq"`
	// Lag is Pending + AckPending: the partition's URLs not finished.
	Lag uint64 `json:"lag"`
	// Error says why the consumer could not be read, if it could not.
	Error string `json:"error,omitempty"`
}

// NodeStatus is one member of the crawl, as its stats server answers.
type NodeStatus struct {
	ID      string    `json:"id"`
	HTTP    string    `json:"http,omitempty"`
	Started time.Time `json:"started"`
	// Owned lists the partitions the node consumes; Held the messages it
	// holds unacknowledged.
	Owned []int `json:"owned"`
	Held  int   `json:"held"`
	// Fetched is the node's page fetches; Rate and Average its pages per
	// second now and since it started.
	Fetched int64   `json:"fetched"`
	Rate    float64 `json:"rate"`
	Average float64 `json:"average"`
	// Stats and Queue are what the node serves at /stats and /queue.
	Stats crawlkit.Stats `json:"stats"`
	Queue QueueStats     `json:"queue"`
	// Error says why the node's statistics could not be read, if they
	// could not (then only ID, HTTP and Started are set).
	Error string `json:"error,omitempty"`
}

// ReadCluster reads the status of crawl crawlID: the stream's partition
// consumers, each read from its own leader (a listing of all consumers
// waits for every leader, and timed out for minutes after a server was
// killed), and every member's statistics, fetched with client. A consumer
// or a node that does not answer is reported with its Error, not as a
// failure of the whole; ReadCluster fails only if the stream or the
// membership bucket cannot be read.
func ReadCluster(ctx context.Context, js jetstream.JetStream, crawlID string, client *http.Client) (ClusterStatus, error) {
	nm := namesFor(crawlID)
	cs := ClusterStatus{Crawl: crawlID, Time: time.Now()}
	stream, err := js.Stream(ctx, nm.stream)
	if err != nil {
		return cs, fmt.Errorf("distributed: crawl %q: %w", crawlID, err)
	}
	var ids []int
	names := stream.ConsumerNames(ctx)
	for name := range names.Name() {
		if p, ok := partitionOfConsumer(name); ok {
			ids = append(ids, p)
		}
	}
	if err := names.Err(); err != nil {
		return cs, fmt.Errorf("distributed: crawl %q: listing consumers: %w", crawlID, err)
	}
	slices.Sort(ids)
	kv, err := js.KeyValue(ctx, nm.members)
	if err != nil {
		return cs, fmt.Errorf("distributed: crawl %q: %w", crawlID, err)
	}
	members, err := listMembers(ctx, kv)
	if err != nil {
		return cs, err
	}

	cs.Partitions = make([]PartitionStatus, len(ids))
	cs.Nodes = make([]NodeStatus, len(members))
	var wg sync.WaitGroup
	limit := make(chan struct{}, 8)
	for i, p := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			limit <- struct{}{}
			defer func() { <-limit }()
			cs.Partitions[i] = readPartition(ctx, stream, nm, p)
		}()
	}
	for i, m := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs.Nodes[i] = readNode(ctx, client, m)
		}()
	}
	wg.Wait()
	// Read after the partitions, so that no partition's last sequence is
	// past the stream's (the readings are not one snapshot).
	info, err := stream.Info(ctx)
	if err != nil {
		return cs, fmt.Errorf("distributed: crawl %q: %w", crawlID, err)
	}
	cs.LastSeq, cs.Messages = info.State.LastSeq, info.State.Msgs

	slices.SortFunc(cs.Nodes, func(a, b NodeStatus) int { return strings.Compare(a.ID, b.ID) })
	owner := map[int]string{}
	var answered []crawlkit.Stats
	for _, n := range cs.Nodes {
		if n.Error != "" {
			continue
		}
		answered = append(answered, n.Stats)
		for _, p := range n.Owned {
			owner[p] = n.ID
		}
	}
	cs.Totals = SumStats(answered...)
	for i := range cs.Partitions {
		cs.Partitions[i].Owner = owner[cs.Partitions[i].ID]
		cs.Lag += cs.Partitions[i].Lag
	}
	return cs, nil
}

// readPartition reads partition p's consumer, then the sequence of its
// newest message (in this order, so that the ack floor is never past it).
func readPartition(ctx context.Context, stream jetstream.Stream, nm names, p int) PartitionStatus {
	ps := PartitionStatus{ID: p}
	c, err := stream.Consumer(ctx, nm.consumer(p))
	if err != nil {
		ps.Error = err.Error()
		return ps
	}
	ci, err := c.Info(ctx)
	if err != nil {
		ps.Error = err.Error()
		return ps
	}
	ps.Pending, ps.AckPending, ps.Redelivered = ci.NumPending, ci.NumAckPending, ci.NumRedelivered
	ps.AckFloor = ci.AckFloor.Stream
	ps.Lag = ci.NumPending + uint64(ci.NumAckPending)
	for _, g := range ci.PriorityGroups {
		if g.Group == priorityGroup && g.PinnedClientID != "" {
			ps.Pinned = true
		}
	}
	last, err := stream.GetLastMsgForSubject(ctx, nm.subject(p))
	switch {
	case err == nil:
		ps.LastSeq = last.Sequence
	case !errors.Is(err, jetstream.ErrMsgNotFound):
		ps.Error = err.Error()
	}
	return ps
}

// readNode fetches a member's /stats and /queue.
func readNode(ctx context.Context, client *http.Client, m MemberInfo) NodeStatus {
	ns := NodeStatus{ID: m.ID, HTTP: m.HTTP, Started: m.Started}
	statsURL, err := m.StatsURL()
	if err != nil {
		ns.Error = err.Error()
		return ns
	}
	if ns.Stats, err = FetchStats(ctx, client, statsURL); err != nil {
		ns.Error = err.Error()
		return ns
	}
	if err := getJSON(ctx, client, strings.TrimSuffix(statsURL, "/stats")+"/queue", &ns.Queue); err != nil {
		ns.Error = err.Error()
		return ns
	}
	ns.Owned, ns.Held = ns.Queue.Owned, ns.Queue.Held
	ns.Fetched, ns.Rate, ns.Average = ns.Stats.URLs.Fetched, ns.Stats.Throughput.Current, ns.Stats.Throughput.Average
	return ns
}

// getJSON decodes the JSON at u, of at most maxStatsBytes, into v.
func getJSON(ctx context.Context, client *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("distributed: %s: %s", u, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxStatsBytes+1))
	if err != nil {
		return err
	}
	if len(b) > maxStatsBytes {
		return fmt.Errorf("distributed: %s: larger than %d bytes", u, maxStatsBytes)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("distributed: %s: %w", u, err)
	}
	return nil
}

// WriteText writes the status as text: a summary line, one line per node
// and one per partition.
func (cs ClusterStatus) WriteText(w io.Writer) error {
	t := cs.Totals
	var owned, pinned int
	for _, p := range cs.Partitions {
		if p.Owner != "" {
			owned++
		}
		if p.Pinned {
			pinned++
		}
	}
	fmt.Fprintf(w, "crawl %s: %d nodes, %d partitions (%d owned, %d pinned), stream last seq %d, %d messages, lag %d\n",
		cs.Crawl, len(cs.Nodes), len(cs.Partitions), owned, pinned, cs.LastSeq, cs.Messages, cs.Lag)
	fmt.Fprintf(w, "total: fetched=%d successful=%d failed=%d retried=%d pages/s=%.1f average=%.1f\n",
		t.URLs.Fetched, t.URLs.Successful, t.URLs.Failed, t.URLs.Retried, t.Throughput.Current, t.Throughput.Average)
	fmt.Fprintf(w, "%-20s %-22s %5s %5s %9s %8s %8s\n", "node", "stats", "parts", "held", "fetched", "pages/s", "average")
	for _, n := range cs.Nodes {
		if n.Error != "" {
			fmt.Fprintf(w, "%-20s %-22s error: %s\n", n.ID, n.HTTP, n.Error)
			continue
		}
		fmt.Fprintf(w, "%-20s %-22s %5d %5d %9d %8.1f %8.1f\n", n.ID, n.HTTP, len(n.Owned), n.Held, n.Fetched, n.Rate, n.Average)
	}
	fmt.Fprintf(w, "%-9s %-20s %6s %8s %11s %9s %9s %6s\n", "partition", "owner", "pinned", "pending", "ack_pending", "ack_floor", "last_seq", "lag")
	for _, p := range cs.Partitions {
		if p.Error != "" {
			fmt.Fprintf(w, "%-9d error: %s\n", p.ID, p.Error)
			continue
		}
		owner := p.Owner
		if owner == "" {
			owner = "-"
		}
		_, err := fmt.Fprintf(w, "%-9d %-20s %6t %8d %11d %9d %9d %6d\n", p.ID, owner, p.Pinned, p.Pending, p.AckPending, p.AckFloor, p.LastSeq, p.Lag)
		if err != nil {
			return err
		}
	}
	return nil
}

// Snapshot is the status as the dashboard shows it: the nodes' summed
// Stats and the cluster's nodes and partitions.
func (cs ClusterStatus) Snapshot() dashboard.Snapshot {
	t := cs.Totals
	snap := dashboard.Snapshot{
		Time: cs.Time,
		URLs: dashboard.URLCounts{
			Discovered: t.URLs.Discovered, Queued: t.URLs.Queued, Fetched: t.URLs.Fetched,
			Successful: t.URLs.Successful, Failed: t.URLs.Failed, Retried: t.URLs.Retried,
			Duplicates: t.URLs.Duplicates, BlockedByRobots: t.URLs.BlockedByRobots,
			TrapRejected: t.URLs.TrapRejected, OutOfScope: t.URLs.OutOfScope,
		},
		Throughput: dashboard.Throughput(t.Throughput),
		Hosts:      dashboard.HostCounts(t.Hosts),
		Workers:    dashboard.WorkerCounts(t.Workers),
		Bytes:      t.Bytes,
		Cluster:    &dashboard.Cluster{Lag: cs.Lag},
	}
	for _, n := range cs.Nodes {
		snap.Cluster.Nodes = append(snap.Cluster.Nodes, dashboard.ClusterNode{
			ID: n.ID, Address: n.HTTP, Partitions: len(n.Owned), Held: n.Held,
			Fetched: n.Fetched, Rate: n.Rate, Average: n.Average, Error: n.Error,
		})
	}
	for _, p := range cs.Partitions {
		snap.Cluster.Partitions = append(snap.Cluster.Partitions, dashboard.ClusterPartition{
			ID: p.ID, Owner: p.Owner, Pending: p.Pending, AckPending: p.AckPending, Lag: p.Lag,
			AckFloor: p.AckFloor, LastSeq: p.LastSeq, Error: p.Error,
		})
	}
	return snap
}
