package postgres

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/jackc/pgx/v5"
)

// TestOpenWithoutDDLRights opens a schema that is already migrated as a
// role that may only read and write its rows, not create schemas or
// tables, as a crawl's worker processes often run: Open must not need
// DDL rights then, and the queue must work.
func TestOpenWithoutDDLRights(t *testing.T) {
	admin := openTestDB(t)
	ctx := context.Background()
	role := fmt.Sprintf("ck_worker_%d", time.Now().UnixNano())
	ident := pgx.Identifier{role}.Sanitize()
	schema := pgx.Identifier{admin.schema}.Sanitize()
	if _, err := admin.pool.Exec(ctx, "CREATE ROLE "+ident+" LOGIN"); err != nil {
		t.Skipf("cannot create a role to test with (%v)", err)
	}
	t.Cleanup(func() {
		admin.pool.Exec(ctx, "DROP OWNED BY "+ident)
		admin.pool.Exec(ctx, "DROP ROLE "+ident)
	})
	for _, q := range []string{
		"GRANT USAGE ON SCHEMA " + schema + " TO " + ident,
		"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA " + schema + " TO " + ident,
		"GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA " + schema + " TO " + ident,
	} {
		if _, err := admin.pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	u, err := url.Parse(testURL())
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	db, err := Open(ctx, u.String(), Config{Schema: admin.schema, MaxConns: 2})
	if err != nil {
		t.Fatalf("Open as a role without DDL rights: %v", err)
	}
	defer db.Close()
	q, err := db.Queue(QueueConfig{LeaseTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.Add(frontier.Entry{URL: "http://a.test/"}); err != nil {
		t.Fatalf("Add as the worker role: %v", err)
	}
	l, err := q.Next(ctx)
	if err != nil || l.URL != "http://a.test/" {
		t.Fatalf("Next as the worker role: %v, %v", l, err)
	}
	if _, err := q.Done(l, frontier.Success(0)); err != nil {
		t.Fatalf("Done as the worker role: %v", err)
	}
}
