package redis

import (
	"context"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/storage/internal/backendtest"
)

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

func TestListenerWakesForOtherProcessAdds(t *testing.T) {
	requireServer(t)
	crawl := crawlFor(t.Name() + time.Now().String())
	t.Cleanup(func() { dropCrawl(t, crawl) })
	name := "waiter-" + crawl
	waiterDB := namedProcess(t, crawl, name)
	adderDB := namedProcess(t, crawl, "adder-"+crawl)
	waiter, err := waiterDB.Queue(QueueConfig{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	adder, err := adderDB.Queue(QueueConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer adder.Close()
	backendtest.WakesOnOtherAdd(t, waiter, adder, waiter.core.Gate(), 1, "https://a.example/1")

	// The listener subscribes again after losing its connection.
	ids := subscribers(t, adderDB, name)
	if len(ids) != 1 {
		t.Fatalf("%d subscriptions named %s, want 1", len(ids), name)
	}
	if err := adderDB.Client().Do(context.Background(), "CLIENT", "KILL", "ID", ids[0]).Err(); err != nil {
		t.Fatal(err)
	}
	backendtest.WakesOnOtherAdd(t, waiter, adder, waiter.core.Gate(), 2, "https://b.example/1")

	// Close ends the listener and its connection.
	if err := waiter.Close(); err != nil {
		t.Fatal(err)
	}
	backendtest.WaitUntil(t, "the listener's connection closes", func() bool { return len(subscribers(t, adderDB, name)) == 0 })
}

func TestNoListen(t *testing.T) {
	requireServer(t)
	crawl := crawlFor(t.Name() + time.Now().String())
	t.Cleanup(func() { dropCrawl(t, crawl) })
	name := "waiter-" + crawl
	db := namedProcess(t, crawl, name)
	q, err := db.Queue(QueueConfig{NoListen: true, PollInterval: time.Millisecond})
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
	if q.core.ListenerStarted() || len(subscribers(t, db, name)) != 0 {
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
	q, err := db.Queue(QueueConfig{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	backendtest.ClosingEndsWait(t, q, q.core.Gate(), func() { db.Close() }, func() bool { return len(subscribers(t, admin, name)) == 0 })
}
