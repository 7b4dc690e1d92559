// Package distributed runs a crawlkit crawl on several machines over NATS
// JetStream: the reference distributed assembly.
//
// Every node runs an ordinary crawlkit.Crawler whose Config.Queue is a Queue
// of this package. The Queue turns the crawl's frontier into a partitioned,
// replicated log:
//
//   - A discovered URL is published to one of P partition subjects
//     ("crawl.<crawl>.p.<n>"), n = urlnorm.HostKey(host) mod P, so every URL
//     of a host lands in one partition. Publishes are asynchronous and
//     batched per page; each carries a Nats-Msg-Id derived from the URL's key
//     so that the server drops a repeated publish (a retry, or the same seed
//     from every node) inside its duplicate window.
//   - Each partition has one durable pull consumer with a pinned priority
//     group (nats-server 2.11+). Nodes register in a key-value bucket with
//     heartbeats, and partitions are assigned by rendezvous hashing with
//     bounded loads over the live members (Owners), so shares stay even and
//     a join or a death moves few partitions beyond those that must move;
//     the live member with the smallest ID then moves partitions from the
//     node with the largest backlog to the one with the smallest
//     (balance.go). The assignment says who should
//     consume; the pin makes the server deliver a partition's messages to
//     one node at a time, even while two nodes disagree about membership,
//     and fetching is fenced on it: a node hands out a partition's URLs only
//     while the server has recently confirmed its pin, and a node given a
//     new pin waits FenceTTL, then resumes each host at the next contact
//     time its earlier holder recorded (handover.go; README.md, "Fencing").
//   - The owner of a partition feeds its messages into a local
//     frontier.Frontier, which schedules by the shared fetch.Politeness as on
//     one node. A host lives in one partition, so politeness and URL dedup
//     stay local to one node.
//   - A message is acknowledged only when its URL's outcome is final: the
//     page was fetched and its links were published (the Crawler calls Add
//     before Done), or it failed for good. Until then the message counts as
//     pending in the consumer; InProgress keeps it from being redelivered
//     while it waits in the local frontier, and retries go back to the
//     stream with NakWithDelay. A node killed with SIGKILL therefore loses
//     nothing: after its heartbeat expires its partitions move, and its
//     unacknowledged messages are redelivered to the new owners after
//     AckWait. With Config.Results, every handled page's record is
//     published before its URL's ack, for ConsumeResults to write once.
//   - Dedup is by partition: a message is fetched only if it is the first
//     message of its URL in the partition (the "primary"); later ones are
//     acknowledged and dropped. The owner keeps the partition's seen set
//     (package bloom, with an exact store) and rebuilds it on takeover
//     from the partition's newest snapshot plus a replay of the partition's
//     headers after it, which carry the URL key (snapshot.go).
//   - A Recrawl schedule (Config.Crawler.Recrawl) is applied by the Queue:
//     a URL's next generation is scheduled in the stream itself
//     (recrawl.go), so it survives any node and is never early.
//   - The crawl is finished when every partition consumer has nothing
//     pending and nothing unacknowledged, and no message was published while
//     that was checked; only then does the Queue's NextAt report a zero time,
//     so every node's Crawler ends its Run.
//
// The stream keeps a partition's messages until they are acknowledged and
// covered by a durable snapshot of its seen set; then the owner purges them
// (snapshot.go), so the log stays bounded. See README.md for deployment on a NATS
// cluster, sizing, and how this maps onto the Kafka design it follows.
package distributed

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/frontier"
)

// Defaults applied by NewNode.
const (
	DefaultPartitions = 64
	// DefaultMemberTTL, DefaultAckWait and DefaultMaxHeldPerPartition are
	// short and small so that a dead node's partitions are fetched again
	// within seconds: its death is seen after MemberTTL, its held messages
	// come back after AckWait (a live node sends InProgress every
	// AckWait/3 for the at most MaxHeldPerPartition it holds of each
	// partition), and the new owner waits FenceTTL = MemberTTL/2 (see
	// README.md, "Failover").
	DefaultMemberTTL           = 4 * time.Second
	DefaultAckWait             = 5 * time.Second
	DefaultMaxHeldPerPartition = 64
	DefaultRetryBase           = frontier.DefaultRetryBase
	DefaultRetryMax            = frontier.DefaultRetryMax
	DefaultDuplicateWindow     = 2 * time.Minute
	DefaultMaxAttempts         = frontier.DefaultMaxAttempts
	// DefaultExtraDeliveries is how many deliveries beyond MaxAttempts a
	// message may have before it is given up without a fetch: the
	// backstop for a URL that kills the nodes fetching it. Handovers,
	// fencing and crashes also redeliver, so the margin is wide; attempts
	// proper are counted by the node that makes them (see
	// Config.MaxAttempts).
	DefaultExtraDeliveries = 50
	// DefaultSnapshotEvery is how many messages of a partition are judged
	// between two snapshots of its seen set: a takeover replays at most
	// about that many (plus what arrived since the last compaction), at
	// ~5 µs each, while a snapshot costs 8 bytes per URL of the partition.
	DefaultSnapshotEvery = 10_000
)

// MinServerVersion is the oldest nats-server the assembly runs on: pinned
// consumers (the ownership fence) and per-message headers replay need 2.11.
// Older servers accept the consumer configuration but ignore the pin, so
// two nodes could consume one partition at once.
const MinServerVersion = "2.11.0"

var (
	// ErrConfig is wrapped by every error NewNode returns for an unusable
	// Config.
	ErrConfig = errors.New("distributed: invalid config")
	// ErrServerTooOld is returned when the NATS server is older than
	// MinServerVersion.
	ErrServerTooOld = errors.New("distributed: NATS server too old")
	// ErrStopping is wrapped by the error of a Queue.Add that gave up
	// publishing because the node is stopping (its Run context ended, or
	// it is leaving): the Crawler then retries the page, and the Queue
	// hands the page's message back to the stream, so another node fetches
	// the page again and finds its links (see README.md, "Stopping").
	ErrStopping = errors.New("distributed: node is stopping")
)

// Config configures a Node.
type Config struct {
	// NATSURL lists the NATS servers, comma-separated
	// ("nats://a:4222,nats://b:4222").
	NATSURL string
	// NATSOptions are passed to nats.Connect after the node's own
	// (reconnect for ever, a client name): TLS (nats.RootCAs,
	// nats.ClientCert), credentials (nats.UserCredentials,
	// nats.NkeyOptionFromSeed, nats.UserInfo, nats.Token), or any other.
	// NATSFlags.Options makes them from the commands' flags.
	NATSOptions []nats.Option
	// NodeID names this node in the membership bucket; letters, digits,
	// '-' and '_'. It must be unique among the live nodes of a crawl.
	NodeID string
	// CrawlID names the crawl: its stream, consumers and buckets are
	// derived from it (letters, digits, '-' and '_').
	CrawlID string
	// Partitions is the number of partitions P (default 64). Every node of
	// a crawl must use the same P; it is fixed when the stream is created.
	Partitions int
	// Replicas is the replication factor of the stream and buckets. Zero
	// means by the cluster's size (DefaultReplicas): 3 when the node sees
	// three or more servers, else 1. It is fixed when the crawl is created.
	Replicas int

	// Crawler configures each node's Crawler; its Queue and Politeness are
	// set by the Node. Its Recrawl schedule (fixed or adaptive) is applied
	// by the Queue, across nodes (recrawl.go; it needs nats-server 2.12).
	// Every node of a crawl should get the same seeds and scope (seeds
	// published by several nodes are deduplicated).
	Crawler crawlkit.Config

	// MemberTTL is how long a node stays a member without a heartbeat
	// (default 4 s); heartbeats are sent every MemberTTL/4. Half of it is
	// the fence TTL: a node hands out URLs of a partition only while its
	// pin of the partition's consumer was confirmed by the server less
	// than that long ago.
	MemberTTL time.Duration
	// AckWait is how long a delivered message may go without an ack or
	// InProgress before the server redelivers it (default 5 s). It
	// bounds how long a dead node's URLs wait before they are fetched by
	// another node. InProgress is sent every AckWait/3 for held messages.
	AckWait time.Duration
	// MaxHeldPerPartition bounds the messages of one partition a node
	// holds unacknowledged (default 64): the consumer's MaxAckPending,
	// the prefetch a dead node takes with it for AckWait, and the window
	// of a partition's backlog within which priority bands order leases
	// (README.md, "Priority bands").
	MaxHeldPerPartition int
	// HandoverHold bounds a fetch that an earlier holder of a partition
	// started before it was fenced. A node records, for each host it
	// fetches, a reservation of HandoverHold before the fetch and the
	// host's next contact time after it; a node given a partition's pin
	// waits the fence TTL, then blocks each host until its recorded time
	// (see handover.go). If the records cannot be read, it waits
	// HandoverHold beyond the fence TTL instead. Default:
	// Crawler.MaxCrawlDelay, or 30 s. See README.md, "Fencing".
	HandoverHold time.Duration
	// BalanceEvery is how often the live member with the smallest ID
	// compares the partitions' backlogs and moves partitions from the
	// busiest node to the least busy (default 2 × MemberTTL; balance.go,
	// README.md "Balance"). Negative: never; every partition stays with its
	// Owners assignment.
	BalanceEvery time.Duration
	// PullExpiry is how long one pull request waits on the server
	// (default MemberTTL/4, at least 1 s). The pin lasts 3 × PullExpiry
	// without a pull.
	PullExpiry time.Duration

	// RetryBase and RetryMax bound the wait before a retried URL is
	// redelivered: RetryBase × 2^(attempt-1), at most RetryMax, and at
	// least the Retry-After the Crawler asked for (defaults 30 s and 1 h;
	// Crawler.RetryBackoff sets RetryBase when RetryBase is zero).
	RetryBase, RetryMax time.Duration
	// MaxAttempts bounds the attempts of a URL (default
	// Crawler.MaxAttempts or 5): the node that owns the URL's partition
	// gives it up when that many of its fetches ended in a retry (the count
	// starts again when the partition moves, so a URL may get more
	// attempts across handovers, never fewer). A message delivered more
	// than MaxAttempts + DefaultExtraDeliveries times is dropped as failed.
	MaxAttempts int
	// DuplicateWindow is how long the stream remembers Nats-Msg-Ids to
	// drop repeated publishes (default 2 minutes). Within it, the server
	// drops a URL published again (by any node) before it reaches a
	// partition; after it, the partition's seen set does. It is fixed
	// when the stream is created.
	DuplicateWindow time.Duration
	// SnapshotEvery bounds the log: a partition's owner snapshots the
	// partition's seen set once it has judged SnapshotEvery messages more
	// than the newest snapshot covers (default 10 000), and purges the
	// partition's messages that are both acknowledged and covered by a
	// snapshot, so that a takeover replays only the messages after the
	// snapshot and the stream does not keep every URL ever published
	// (README.md, "Bounded log"). Negative: no snapshots and no purging;
	// the stream keeps every message and a takeover replays them all.
	SnapshotEvery int
	// ExpectedURLs sizes each partition's seen set
	// (ExpectedURLs/Partitions, at least 4096; default 1 million in all).
	ExpectedURLs uint64

	// Results publishes every handled page's Result (its
	// crawlkit.PageRecord, with the URL's key as ID) to the crawl's
	// results stream before the page's URL is acknowledged, for
	// ConsumeResults to write once (see results.go). The Crawler's own
	// Sink, if any, still receives every page.
	Results bool

	// Logger receives the node's events; nil discards them.
	Logger *slog.Logger
	// Now is the node's clock; nil means time.Now.
	Now func() time.Time
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// withDefaults checks cfg and fills in defaults.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.NATSURL == "" {
		return cfg, fmt.Errorf("%w: NATSURL is empty", ErrConfig)
	}
	if !namePattern.MatchString(cfg.NodeID) {
		return cfg, fmt.Errorf("%w: node id %q: want 1-64 letters, digits, '-' or '_'", ErrConfig, cfg.NodeID)
	}
	if !namePattern.MatchString(cfg.CrawlID) {
		return cfg, fmt.Errorf("%w: crawl id %q: want 1-64 letters, digits, '-' or '_'", ErrConfig, cfg.CrawlID)
	}
	if cfg.Partitions == 0 {
		cfg.Partitions = DefaultPartitions
	}
	if cfg.Partitions < 1 || cfg.Partitions > 4096 {
		return cfg, fmt.Errorf("%w: %d partitions: want 1 to 4096", ErrConfig, cfg.Partitions)
	}
	if cfg.Replicas < 0 || cfg.Replicas > 5 {
		return cfg, fmt.Errorf("%w: %d replicas: want 1 to 5 (0: by the cluster's size)", ErrConfig, cfg.Replicas)
	}
	if cfg.MemberTTL == 0 {
		cfg.MemberTTL = DefaultMemberTTL
	}
	if cfg.MemberTTL < time.Second {
		return cfg, fmt.Errorf("%w: member TTL %v: want at least 1s", ErrConfig, cfg.MemberTTL)
	}
	if cfg.AckWait == 0 {
		cfg.AckWait = DefaultAckWait
	}
	if cfg.AckWait < time.Second {
		return cfg, fmt.Errorf("%w: ack wait %v: want at least 1s", ErrConfig, cfg.AckWait)
	}
	if cfg.MaxHeldPerPartition == 0 {
		cfg.MaxHeldPerPartition = DefaultMaxHeldPerPartition
	}
	if cfg.MaxHeldPerPartition < 1 {
		return cfg, fmt.Errorf("%w: MaxHeldPerPartition %d: want at least 1", ErrConfig, cfg.MaxHeldPerPartition)
	}
	// Zero means a default for these; a negative value would run: a hold
	// shorter than the fence TTL after a handover (politeness), retries
	// redelivered at once, every URL given up at its first retry.
	if cfg.HandoverHold < 0 {
		return cfg, fmt.Errorf("%w: handover hold %v: must not be negative", ErrConfig, cfg.HandoverHold)
	}
	if cfg.RetryBase < 0 || cfg.RetryMax < 0 {
		return cfg, fmt.Errorf("%w: retry base %v, retry max %v: must not be negative", ErrConfig, cfg.RetryBase, cfg.RetryMax)
	}
	if cfg.MaxAttempts < 0 {
		return cfg, fmt.Errorf("%w: MaxAttempts %d: must not be negative", ErrConfig, cfg.MaxAttempts)
	}
	if cfg.BalanceEvery == 0 {
		cfg.BalanceEvery = 2 * cfg.MemberTTL
	}
	if cfg.HandoverHold == 0 {
		cfg.HandoverHold = cfg.Crawler.MaxCrawlDelay
		if cfg.HandoverHold == 0 {
			cfg.HandoverHold = crawlkit.DefaultMaxCrawlDelay
		}
	}
	if cfg.PullExpiry == 0 {
		cfg.PullExpiry = max(cfg.MemberTTL/4, time.Second)
	}
	if cfg.PullExpiry < time.Second {
		return cfg, fmt.Errorf("%w: pull expiry %v: want at least 1s", ErrConfig, cfg.PullExpiry)
	}
	if cfg.RetryBase == 0 {
		cfg.RetryBase = cfg.Crawler.RetryBackoff
		if cfg.RetryBase == 0 {
			cfg.RetryBase = DefaultRetryBase
		}
	}
	if cfg.RetryMax == 0 {
		cfg.RetryMax = DefaultRetryMax
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = cfg.Crawler.MaxAttempts
		if cfg.MaxAttempts == 0 {
			cfg.MaxAttempts = DefaultMaxAttempts
		}
	}
	if cfg.DuplicateWindow == 0 {
		cfg.DuplicateWindow = DefaultDuplicateWindow
	}
	if cfg.DuplicateWindow < 100*time.Millisecond {
		return cfg, fmt.Errorf("%w: duplicate window %v: want at least 100ms", ErrConfig, cfg.DuplicateWindow)
	}
	if cfg.SnapshotEvery == 0 {
		cfg.SnapshotEvery = DefaultSnapshotEvery
	}
	if cfg.ExpectedURLs == 0 {
		cfg.ExpectedURLs = crawlkit.DefaultExpectedURLs
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return cfg, nil
}

// policy is the crawl's frontier.Policy: the retry, give-up and recrawl
// rules of every crawlkit queue, with this Config's bounds and the
// Crawler's Recrawl schedule.
func (cfg Config) policy() frontier.Policy {
	return frontier.Policy{MaxAttempts: cfg.MaxAttempts, RetryBase: cfg.RetryBase, RetryMax: cfg.RetryMax,
		Schedule: cfg.Crawler.Recrawl}
}

// DefaultReplicas is the replication factor for a cluster of servers
// servers: 3 (a majority survives one server's loss) when there are
// three or more, else 1.
func DefaultReplicas(servers int) int {
	if servers >= 3 {
		return 3
	}
	return 1
}

// names derives the JetStream names of a crawl.
type names struct {
	crawl   string
	stream  string // the URL log
	members string // the membership bucket
}

func namesFor(crawlID string) names {
	return names{
		crawl:   crawlID,
		stream:  "CRAWL_" + crawlID,
		members: "crawl_" + crawlID + "_members",
	}
}

// hosts is the crawl's hosts bucket (handover.go).
func (n names) hosts() string { return "crawl_" + n.crawl + "_hosts" }

// subject is partition p's subject.
func (n names) subject(p int) string { return "crawl." + n.crawl + ".p." + strconv.Itoa(p) }

// subjects is the stream's subject filter.
func (n names) subjects() string { return "crawl." + n.crawl + ".p.*" }

// consumer is partition p's durable consumer name.
func (n names) consumer(p int) string { return "p" + strconv.Itoa(p) }

// partitionOfConsumer parses a consumer name made by consumer.
func partitionOfConsumer(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, "p")
	if !ok {
		return 0, false
	}
	p, err := strconv.Atoi(s)
	return p, err == nil && p >= 0
}

// priorityGroup is the pinned priority group every owner pulls through.
const priorityGroup = "owner"

// checkServerVersion refuses servers older than MinServerVersion.
func checkServerVersion(v string) error {
	if !versionAtLeast(v, MinServerVersion) {
		return fmt.Errorf("%w: connected to nats-server %q, need %s or newer (pinned consumers; older servers ignore the pin, so two nodes could consume one partition)",
			ErrServerTooOld, v, MinServerVersion)
	}
	return nil
}

// versionAtLeast compares dotted numeric versions ("2.11.4", "v2.12.0-RC.1"
// counts as 2.12.0).
func versionAtLeast(v, min string) bool {
	parse := func(s string) [3]int {
		var out [3]int
		s = strings.TrimPrefix(s, "v")
		if i := strings.IndexAny(s, "-+ "); i >= 0 {
			s = s[:i]
		}
		for i, part := range strings.SplitN(s, ".", 3) {
			n, err := strconv.Atoi(part)
			if err != nil {
				return [3]int{-1}
			}
			out[i] = n
		}
		return out
	}
	a, b := parse(v), parse(min)
	if a[0] < 0 {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return true
}
