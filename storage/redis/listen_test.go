package redis

import (
	"context"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/crawlkit/crawlkit/frontier"
)

// waitUntil polls cond until it holds, failing the test after a minute.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// namedProcess opens crawl on a client of its own whose connections carry
// name, as another process's would.
func namedProcess(t *testing.T, crawl, name string) *DB {
	t.Helper()
	client := goredis.NewClient(&goredis.Options{Addr: testAddr(), ClientName: name, PoolSize: 2})
	t.Cleanup(func() { client.Close() })
	db, err := New(client, crawl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// subscribers returns the ids of the server's pub/sub connections named
// name.
func subscribers(t *testing.T, admin *DB, name string) []string {
	t.Helper()
	list, err := admin.Client().ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, line := range strings.Split(list, "\n") {
		f := map[string]string{}
		for _, kv := range strings.Fields(line) {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = v
		}
		if f["name"] == name && f["sub"] != "0" && f["sub"] != "" {
			ids = append(ids, f["id"])
		}
	}
	return ids
}

// nextAfterOtherAdd starts waiter.Next, waits until it sleeps with its
// listener subscribed (listens subscriptions so far), adds a URL through
// adder and checks that Next leases it. Waiter's PollInterval is an hour,
// so only a message can end the wait before the test's deadline.
func nextAfterOtherAdd(t *testing.T, waiter, adder *Queue, listens int64, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	type result struct {
		l   *frontier.Lease
		err error
	}
	got := make(chan result, 1)
	go func() {
		l, err := waiter.Next(ctx)
		got <- result{l, err}
	}()
	waitUntil(t, "the waiting Next sleeps and the listener is subscribed", func() bool {
		return waiter.listens.Load() >= listens && waiter.idle.Sleeping() == 1
	})
	if err := adder.Add(frontier.Entry{URL: url}); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil {
		t.Fatalf("Next after another process's Add: %v (the message did not wake it)", r.err)
	}
	if r.l.URL != url {
		t.Fatalf("Next leased %s, want %s", r.l.URL, url)
	}
	if err := waiter.Done(r.l, frontier.Outcome{Kind: frontier.OutcomeSuccess}); err != nil {
		t.Fatal(err)
	}
}

func TestListenerWakesForOtherProcessAdds(t *testing.T) {
	requireServer(t)
	crawl := crawlFor(t.Name() + time.Now().String())
	t.Cleanup(func() { dropCrawl(t, crawl) })
	name := "waiter-" + crawl
	waiterDB := namedProcess(t, crawl, name)
	adderDB := namedProcess(t, crawl, "adder-"+crawl)
	waiter, err := waiterDB.Queue(QueueOptions{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	adder, err := adderDB.Queue(QueueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer adder.Close()
	nextAfterOtherAdd(t, waiter, adder, 1, "https://a.example/1")

	// The listener subscribes again after losing its connection.
	ids := subscribers(t, adderDB, name)
	if len(ids) != 1 {
		t.Fatalf("%d subscriptions named %s, want 1", len(ids), name)
	}
	if err := adderDB.Client().Do(context.Background(), "CLIENT", "KILL", "ID", ids[0]).Err(); err != nil {
		t.Fatal(err)
	}
	nextAfterOtherAdd(t, waiter, adder, 2, "https://b.example/1")

	// Close ends the listener and its connection.
	if err := waiter.Close(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the listener's connection closes", func() bool { return len(subscribers(t, adderDB, name)) == 0 })
}

func TestNoListen(t *testing.T) {
	requireServer(t)
	crawl := crawlFor(t.Name() + time.Now().String())
	t.Cleanup(func() { dropCrawl(t, crawl) })
	name := "waiter-" + crawl
	db := namedProcess(t, crawl, name)
	q, err := db.Queue(QueueOptions{NoListen: true, PollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.Add(frontier.Entry{URL: "https://a.example/"}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	if q.listenDone != nil || len(subscribers(t, db, name)) != 0 {
		t.Fatal("a listener runs with NoListen set")
	}
}

func TestCloseDBEndsListener(t *testing.T) {
	requireServer(t)
	crawl := crawlFor(t.Name() + time.Now().String())
	t.Cleanup(func() { dropCrawl(t, crawl) })
	name := "waiter-" + crawl
	db := namedProcess(t, crawl, name)
	admin := namedProcess(t, crawl, "admin-"+crawl)
	q, err := db.Queue(QueueOptions{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := q.Next(context.Background())
		done <- err
	}()
	waitUntil(t, "the listener is subscribed", func() bool { return q.listens.Load() == 1 && q.idle.Sleeping() == 1 })
	db.Close()
	if err := <-done; err != frontier.ErrClosed {
		t.Fatalf("Next after DB.Close: %v, want frontier.ErrClosed", err)
	}
	q.Close() // returns once the listener has
	waitUntil(t, "the listener's connection closes", func() bool { return len(subscribers(t, admin, name)) == 0 })
}
